public import Foundation
internal import GRDB
public import R2UpModel

/// What a sync needs to know about a track to call it unchanged: no more.
public struct SyncTrackState: Sendable, Equatable {
    public var size: Int64
    public var mtimeNs: Int64
    public var uploadState: UploadState
    public var bucket: String?
    public var key: String?
}

/// The store's tracks read in path order, looked up by paths that come in the same order.
public struct SyncTrackLookup {
    private let rows: RowCursor
    private var current: (path: String, state: SyncTrackState, vanished: VanishedTrack?)?
    private var started = false
    /// Uploaded tracks (in the bucket asked for) passed over: no scanned file at their path.
    public private(set) var vanished: [VanishedTrack] = []
    private let bucket: String?

    init(rows: RowCursor, bucket: String?) {
        self.rows = rows
        self.bucket = bucket
    }

    /// Walks the rest of the tracks, after the scan's last file: each is vanished too.
    public mutating func finish() throws {
        if !started {
            started = true
            try advance()
        }
        while current != nil { try advance() }
    }

    /// The track at `path`, or nil; each call's path must sort after the previous one's (bytes).
    public mutating func state(at path: String) throws -> SyncTrackState? {
        if !started {
            started = true
            try advance()
        }
        // Bytes, not String ==: an NFD name and its NFC twin are two files (and two tracks).
        while let row = current, row.path.utf8.lexicographicallyPrecedes(path.utf8) { try advance() }
        guard let row = current, row.path.utf8.elementsEqual(path.utf8) else { return nil }
        current?.vanished = nil  // seen
        return row.state
    }

    private mutating func advance() throws {
        if let gone = current?.vanished { vanished.append(gone) }
        guard let row = try rows.next() else {
            current = nil
            return
        }
        let state = SyncTrackState(
            size: row[1], mtimeNs: row[2], uploadState: UploadState(rawValue: row[3]) ?? .none, bucket: row[4], key: row[5])
        var gone: VanishedTrack?
        if let bucket, state.uploadState == .uploaded, state.bucket == bucket, let key = state.key {
            gone = VanishedTrack(
                path: row[0], size: state.size, mtimeNs: state.mtimeNs, key: key, etag: row[6], device: row[7], inode: row[8],
                digest: row[9])
        }
        current = (row[0], state, gone)
    }
}

extension Store {
    /// Runs `body` with the tracks under `folder` in path order, in ONE read: the no-op sync's
    /// only query, walked beside a scan in the same order so neither is held in memory.
    /// `bucket`: the tracks uploaded there that the walk passes over are `vanished`.
    public func withSyncStates<T>(
        under folder: String, bucket: String? = nil, _ body: (inout SyncTrackLookup) throws -> T
    ) throws(StoreError) -> T {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        return try read { db in
            // The UNIQUE index on path gives this order (BINARY: bytes) without a sort.
            let rows = try Row.fetchCursor(
                db,
                sql: #"""
                    SELECT path, size, mtimeNs, uploadState, bucket, "key", etag, device, inode, digest
                    FROM tracks WHERE path >= ? AND path < ? ORDER BY path
                    """#,
                arguments: [prefix + "/", prefix + "0"])
            var lookup = SyncTrackLookup(rows: rows, bucket: bucket)
            return try body(&lookup)
        }
    }

    /// Forgets queued jobs whose file is gone (deleted between a sync's scan and its upload):
    /// nothing is left to send. A track that was never uploaded goes too; one with a cloud copy
    /// keeps it, with that copy's size and no mtime: queueing wrote the changed file's size and
    /// mtime on the track, and a file moved back in with them would pass as uploaded while the
    /// bucket holds the old bytes (the soak's lost appends). Returns the multipart uploads those
    /// jobs had begun, to abort.
    public func dropJobs(_ ids: [UUID]) throws(StoreError) -> [(key: String, uploadID: String)] {
        let time = now()
        return try write { db in
            var abandoned: [(key: String, uploadID: String)] = []
            for id in ids {
                guard let job = try Self.fetchJob(db, id: id), job.state != .completed else { continue }
                if let uploadID = job.uploadID { abandoned.append((job.key, uploadID)) }
                try Self.deleteParts(db, jobID: id)
                try db.execute(sql: "DELETE FROM jobs WHERE id = ?", arguments: [id.uuidString])
                try db.execute(sql: #"DELETE FROM tracks WHERE path = ? AND "key" IS NULL"#, arguments: [job.path])
                try db.execute(
                    sql: #"""
                        UPDATE tracks SET uploadState = ?, lastError = NULL, updatedAt = ?, mtimeNs = 0,
                            size = COALESCE((SELECT fileSize FROM history WHERE r2Key = tracks."key" AND bucket = tracks.bucket
                                AND etag = tracks.etag ORDER BY uploadDate DESC LIMIT 1), size)
                        WHERE path = ?
                        """#,
                    arguments: [UploadState.uploaded.rawValue, StoreDate.text(time), job.path])
            }
            return abandoned
        }
    }

    /// `--verify-remote`: objects with no local file become cloud-only tracks (seed 000's ☁)
    /// at the path where the file would be. A track r2up already knows keeps its states.
    @discardableResult
    public func recordCloudOnly(_ objects: [(path: String, copy: CloudCopy, size: Int64)]) throws(StoreError) -> Int {
        let time = now()
        return try write { db in
            let insert = try db.makeStatement(sql: """
                INSERT INTO tracks (path, size, mtimeNs, bucket, "key", etag, updatedAt) VALUES (?, ?, 0, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET bucket = excluded.bucket, "key" = excluded."key", etag = excluded.etag,
                    updatedAt = excluded.updatedAt
                WHERE tracks."key" IS NULL OR tracks."key" != excluded."key"
                """)
            var count = 0
            for object in objects {
                try insert.execute(arguments: [object.path, object.size, object.copy.bucket, object.copy.key, object.copy.etag, time])
                count += db.changesCount
            }
            return count
        }
    }
}
