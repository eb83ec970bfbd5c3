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

/// A file sync is about to queue, with the key it maps to.
public struct SyncUpload: Sendable, Equatable {
    public var file: ScannedFile
    public var key: String
    public var contentType: String
    /// Planned because the track was not uploaded as the file is: another run that uploaded it
    /// since leaves nothing to do. False for a file whose object is missing (`--verify-remote`).
    public var unlessUploaded: Bool

    public init(file: ScannedFile, key: String, contentType: String, unlessUploaded: Bool = true) {
        self.file = file
        self.key = key
        self.contentType = contentType
        self.unlessUploaded = unlessUploaded
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

    /// Records the files and queues their jobs in ONE transaction (thousands of files at a
    /// first sync: one commit, not three per file). An unfinished job for the same file and
    /// key is reused, as `enqueue` does; one whose file moved on starts over as staged.
    /// A scheduled run honours each job's retry rules: a failed job whose time has not come
    /// is in `waiting`, not run, and so is one another live process is uploading.
    /// - Returns: the jobs to run, those that wait, and multipart uploads abandoned by restaged
    ///   jobs (abort them).
    public func enqueueSync(
        _ uploads: [SyncUpload], bucket: String, intent: EnqueueIntent = .scheduled, replace: ReplacePolicy = .guarded
    ) throws(StoreError) -> SyncQueued {
        let time = now()
        return try write { db in
            var jobs: [UploadJob] = []
            var conditions: [UUID: WriteCondition?] = [:]
            var heldElsewhere: Set<UUID> = []
            var waiting: [(job: UploadJob, disposition: JobDisposition)] = []
            var abandoned: [(String, String)] = []
            for upload in uploads {
                let file = upload.file
                let planned = UploadJob(
                    path: file.path, bucket: bucket, key: upload.key, contentType: upload.contentType,
                    length: file.size, mtimeNs: file.mtimeNs, createdAt: time)
                if upload.unlessUploaded, try Self.isUploadedAsIs(db, planned) {
                    waiting.append((planned, .uploaded))
                    continue
                }
                // Queued means "not (or no longer) in the cloud as it is on disk".
                try Self.noteTrackFile(db, path: file.path, size: file.size, mtimeNs: file.mtimeNs, at: time, onlyIfChanged: false)
                // Where the file lives, so a later sync knows it after a rename (`MovePlan`).
                try db.cachedStatement(sql: "UPDATE tracks SET device = ?, inode = ? WHERE path = ?")
                    .execute(arguments: [file.device, file.inode, file.path])
                let queued = try Self.enqueue(db, planned, at: time, intent: intent, replace: replace)
                if let uploadID = queued.abandonedUploadID { abandoned.append((upload.key, uploadID)) }
                if queued.disposition == .ready {
                    jobs.append(queued.job)
                    conditions.updateValue(queued.condition, forKey: queued.job.id)
                    if queued.keyHeldElsewhere { heldElsewhere.insert(queued.job.id) }
                } else {
                    waiting.append((queued.job, queued.disposition))
                }
            }
            return SyncQueued(jobs: jobs, waiting: waiting, abandoned: abandoned, conditions: conditions, heldElsewhere: heldElsewhere)
        }
    }

    /// Forgets queued jobs whose file is gone (deleted between a sync's scan and its upload):
    /// nothing is left to send. A track that was never uploaded goes too; one with a cloud copy
    /// keeps it. Returns the multipart uploads those jobs had begun, to abort.
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
                    sql: "UPDATE tracks SET uploadState = 'uploaded', lastError = NULL, updatedAt = ? WHERE path = ?",
                    arguments: [StoreDate.text(time), job.path])
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

/// What `enqueueSync` queued: the jobs to run (with the condition each key must meet), the
/// files left waiting and why, and the multipart uploads of changed files to abort.
public struct SyncQueued: Sendable {
    public var jobs: [UploadJob]
    public var waiting: [(job: UploadJob, disposition: JobDisposition)]
    public var abandoned: [(key: String, uploadID: String)]
    public var conditions: [UUID: WriteCondition?]
    /// Jobs whose key holds another track's upload (`EnqueueResult.keyHeldElsewhere`).
    public var heldElsewhere: Set<UUID>
}
