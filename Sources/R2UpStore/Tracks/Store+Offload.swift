import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// The tracks at `path` (a file) or under it (a folder), by path, with digest and upload date.
    public func storedTracks(at path: String) throws(StoreError) -> [StoredTrack] {
        var prefix = path
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        let sql = """
            SELECT t.*, (SELECT MAX(h.uploadDate) FROM history h WHERE h.bucket = t.bucket AND h.r2Key = t."key") AS uploadedAt
            FROM tracks t WHERE t.path = ? OR (t.path >= ? AND t.path < ?) ORDER BY t.path
            """
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: [prefix, prefix + "/", prefix + "0"]).map(Self.storedTrack)
        }
    }

    /// A track row read with its `uploadedAt` (the newest history row of its key).
    private static func storedTrack(_ row: Row) throws -> StoredTrack {
        let track = try TrackRecord(row: row)
        let uploaded: Date? = try row.decode(forColumn: "uploadedAt")
        return StoredTrack(track: track, digest: try row.decode(forColumn: "digest"), uploadedAt: uploaded ?? track.updatedAt)
    }

    /// The tracks in `bucket` whose last download failed and whose file r2up had as a copy it
    /// uploaded or offloaded (a failed `fetch`, or a pull over such a track), with digest and
    /// upload date: `r2up retry` brings them back as `fetch` does, against what was recorded,
    /// never as whatever object is at the key now. A track a pull made stays a pull's.
    public func failedFetches(bucket: String) throws(StoreError) -> [StoredTrack] {
        let sql = """
            SELECT t.*, (SELECT MAX(h.uploadDate) FROM history h WHERE h.bucket = t.bucket AND h.r2Key = t."key") AS uploadedAt
            FROM tracks t WHERE t.downloadState = 'error' AND t."key" IS NOT NULL AND t.bucket = ?
            AND (t.uploadState = 'uploaded' OR t.offloadedETag IS NOT NULL) ORDER BY t.path
            """
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: [bucket]).map(Self.storedTrack)
        }
    }

    /// Records that the tracks' local copies were removed on purpose, their cloud copies
    /// verified: each row (history, identity, key) stays, and a download state left from an
    /// earlier fetch is cleared, so the track shows cloud only (☁) until it is fetched again.
    /// One transaction for all of `paths`: an offload records its removals in batches. The
    /// cloud copy's ETag is kept as the mark that the file went on purpose (`offloadedPaths`).
    public func recordOffload(paths: [String]) throws(StoreError) {
        guard !paths.isEmpty else { return }
        let time = StoreDate.text(now())
        try write { db in
            let statement = try db.makeStatement(
                sql: "UPDATE tracks SET downloadState = 'none', lastError = NULL, offloadedETag = etag, updatedAt = ? WHERE path = ?")
            for path in paths { try statement.execute(arguments: [time, path]) }
        }
    }

    /// The tracks under `folder` in `bucket` whose cloud copy is the one an offload left as their
    /// only copy: their files are gone on purpose, and a mirror must keep their objects.
    public func offloadedPaths(under folder: String, bucket: String) throws(StoreError) -> Set<String> {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        return try read { db in
            let paths = try String.fetchAll(
                db,
                sql: """
                    SELECT path FROM tracks WHERE path >= ? AND path < ? AND bucket = ?
                    AND offloadedETag IS NOT NULL AND offloadedETag = etag
                    """,
                arguments: [prefix + "/", prefix + "0", bucket])
            return Set(paths)
        }
    }
}
