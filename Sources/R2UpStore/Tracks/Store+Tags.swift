import Foundation
internal import GRDB
public import R2UpModel

/// A track's tags as stored, with the file size and mtime they were read from.
public struct StoredTags: Sendable, Equatable {
    public var size: Int64
    public var mtimeNs: Int64
    /// nil: the file had no readable tags when it was read.
    public var tags: AudioTags?

    package init(size: Int64, mtimeNs: Int64, tags: AudioTags? = nil) {
        self.size = size
        self.mtimeNs = mtimeNs
        self.tags = tags
    }
}

extension Store {
    static let tagColumns = #"path, title, artist, albumArtist, album, year, trackNumber, discNumber, genre, compilation, durationMs, bitrateKbps, sampleRate, channels, tagsSize, tagsMtimeNs"#

    /// The stored tags of tracks in a folder and its subfolders (or of every track: folder nil), by path.
    public func storedTags(under folder: String?) throws(StoreError) -> [String: StoredTags] {
        var sql = "SELECT \(Self.tagColumns) FROM tracks WHERE tagsSize IS NOT NULL"
        var arguments: StatementArguments = []
        if let folder {
            var prefix = folder
            while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
            if prefix == "/" { prefix = "" }
            sql += " AND path >= ? AND path < ?"
            arguments = [prefix + "/", prefix + "0"]
        }
        return try read { db in
            var result: [String: StoredTags] = [:]
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                let path: String = row["path"]
                result[path] = Self.storedTags(row)
            }
            return result
        }
    }

    /// The stored tags of these tracks, by path.
    public func storedTags(paths: [String]) throws(StoreError) -> [String: StoredTags] {
        try read { db in
            var result: [String: StoredTags] = [:]
            let statement = try db.cachedStatement(sql: "SELECT \(Self.tagColumns) FROM tracks WHERE path = ? AND tagsSize IS NOT NULL")
            for path in paths {
                if let row = try Row.fetchOne(statement, arguments: [path]) { result[path] = Self.storedTags(row) }
            }
            return result
        }
    }

    static func storedTags(_ row: Row) -> StoredTags {
        let tags = AudioTags(
            title: row["title"], artist: row["artist"], albumArtist: row["albumArtist"], album: row["album"],
            year: row["year"], track: row["trackNumber"], disc: row["discNumber"], genre: row["genre"],
            compilation: (row["compilation"] as Int?).map { $0 != 0 }, durationMs: row["durationMs"],
            bitrateKbps: row["bitrateKbps"], sampleRate: row["sampleRate"], channels: row["channels"])
        let empty = AudioTags()
        return StoredTags(size: row["tagsSize"], mtimeNs: row["tagsMtimeNs"], tags: tags == empty ? nil : tags)
    }

    /// Records tags read from files, in one transaction. A track r2up did not know yet is
    /// created with its state `none`; a known one keeps its size, mtime and states (queueing
    /// the file compares those with the file, as before).
    public func saveTags(_ entries: [(path: String, stored: StoredTags)]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        let time = StoreDate.text(now())
        try write { db in
            let statement = try db.cachedStatement(sql: """
                INSERT INTO tracks (path, size, mtimeNs, updatedAt, title, artist, albumArtist, album, year, trackNumber,
                    discNumber, genre, compilation, durationMs, bitrateKbps, sampleRate, channels, tagsSize, tagsMtimeNs)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET title = excluded.title, artist = excluded.artist,
                    albumArtist = excluded.albumArtist, album = excluded.album, year = excluded.year,
                    trackNumber = excluded.trackNumber, discNumber = excluded.discNumber,
                    genre = excluded.genre, compilation = excluded.compilation,
                    durationMs = excluded.durationMs, bitrateKbps = excluded.bitrateKbps,
                    sampleRate = excluded.sampleRate, channels = excluded.channels,
                    tagsSize = excluded.tagsSize, tagsMtimeNs = excluded.tagsMtimeNs
                """)
            for (path, stored) in entries {
                let tags = stored.tags ?? AudioTags()
                let values: [(any DatabaseValueConvertible)?] = [
                    path, stored.size, stored.mtimeNs, time,
                    tags.title, tags.artist, tags.albumArtist, tags.album, tags.year, tags.track, tags.disc,
                    tags.genre, tags.compilation == true ? 1 : nil,
                    tags.durationMs, tags.bitrateKbps, tags.sampleRate, tags.channels, stored.size, stored.mtimeNs,
                ]
                try statement.execute(arguments: StatementArguments(values))
            }
        }
    }
}
