import Foundation
import GRDB

/// What a sync needs to know about a track to call it unchanged: no more.
public struct SyncTrackState: Sendable, Equatable {
    public var size: Int64
    public var mtimeNs: Int64
    public var uploadState: UploadState
    public var bucket: String?
    public var key: String?
}

/// A file sync is about to queue, with the key it maps to.
public struct SyncUpload: Sendable, Equatable {
    public var file: ScannedFile
    public var key: String
    public var contentType: String
}

extension Store {
    /// Every track under `folder`, by path, in ONE read: the no-op sync's only query.
    public func syncStates(under folder: String) throws(StoreError) -> [String: SyncTrackState] {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        return try read { db in
            var states: [String: SyncTrackState] = [:]
            let rows = try Row.fetchCursor(
                db, sql: #"SELECT path, size, mtimeNs, uploadState, bucket, "key" FROM tracks WHERE path >= ? AND path < ?"#,
                arguments: [prefix + "/", prefix + "0"])
            while let row = try rows.next() {
                states[row[0]] = SyncTrackState(
                    size: row[1], mtimeNs: row[2], uploadState: UploadState(rawValue: row[3]) ?? .none,
                    bucket: row[4], key: row[5])
            }
            return states
        }
    }

    /// Records the files and queues their jobs in ONE transaction (thousands of files at a
    /// first sync: one commit, not three per file). An unfinished job for the same file and
    /// key is reused, as `enqueue` does; one whose file moved on starts over as staged.
    /// - Returns: the jobs to run, and multipart uploads abandoned by restaged jobs (abort them).
    public func enqueueSync(_ uploads: [SyncUpload], bucket: String) throws(StoreError) -> (jobs: [UploadJob], abandoned: [(key: String, uploadID: String)]) {
        let time = now()
        return try write { db in
            var jobs: [UploadJob] = []
            var abandoned: [(String, String)] = []
            let track = try db.makeStatement(sql: """
                INSERT INTO tracks (path, size, mtimeNs, updatedAt) VALUES (?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtimeNs = excluded.mtimeNs,
                    uploadState = CASE WHEN uploadState = 'uploaded' THEN 'none' ELSE uploadState END,
                    updatedAt = excluded.updatedAt
                """)
            let find = try db.makeStatement(sql: """
                SELECT * FROM jobs WHERE path = ? AND bucket = ? AND "key" = ? AND state != 'completed'
                ORDER BY createdAt DESC LIMIT 1
                """)
            for upload in uploads {
                let file = upload.file
                // Queued means "not (or no longer) in the cloud as it is on disk".
                try track.execute(arguments: [file.path, file.size, file.mtimeNs, time])
                if var existing = try UploadJob.fetchOne(find, arguments: [file.path, bucket, upload.key]) {
                    if existing.length != file.size || existing.mtimeNs != file.mtimeNs {
                        if let uploadID = existing.uploadID { abandoned.append((upload.key, uploadID)) }
                        existing.length = file.size
                        existing.mtimeNs = file.mtimeNs
                        existing.contentType = upload.contentType
                        existing.partSize = nil
                        existing.attempts = 0
                        try Self.restage(db, &existing, at: time)
                    }
                    jobs.append(existing)
                } else {
                    let job = UploadJob(
                        path: file.path, bucket: bucket, key: upload.key, contentType: upload.contentType,
                        length: file.size, mtimeNs: file.mtimeNs, createdAt: time)
                    try job.insert(db)
                    jobs.append(job)
                }
            }
            return (jobs, abandoned)
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
