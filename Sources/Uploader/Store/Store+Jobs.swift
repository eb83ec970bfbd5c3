import Foundation
import GRDB

/// What `enqueue` did.
public struct EnqueueResult: Sendable, Equatable {
    /// The stored job: the new one, or the unfinished one it matched.
    public var job: UploadJob
    /// Whether a new row was made.
    public var isNew: Bool
    /// The multipart upload of a job that was reset because its file changed; abort it.
    public var abandonedUploadID: String?
}

/// How many jobs are in each state.
public struct QueueCounts: Sendable, Equatable {
    public var byState: [UploadJobState: Int]

    /// Jobs in `state`.
    public subscript(state: UploadJobState) -> Int { byState[state] ?? 0 }
    /// Waiting for a run: staged, initiated, or failed retryably.
    public var waiting: Int { self[.staged] + self[.initiated] + self[.failedRetryable] }
    /// Being worked on: uploading or verifying.
    public var active: Int { self[.uploading] + self[.verifying] }
    /// Failed either way.
    public var failed: Int { self[.failedRetryable] + self[.failedPermanent] }
}

extension Store {
    /// Queues an upload. An unfinished job for the same path, bucket and key is reused, not
    /// duplicated; if the file's size or mtime moved since, that job starts over as staged.
    @discardableResult
    public func enqueue(_ job: UploadJob) throws(StoreError) -> EnqueueResult {
        let time = now()
        return try write { db in try Self.enqueue(db, job, at: time) }
    }

    /// Queues many jobs in one transaction, each as `enqueue(_:)` does, and records each
    /// file's size and mtime on its track (created when new): one commit for a whole folder.
    public func enqueue(_ jobs: [UploadJob]) throws(StoreError) -> [EnqueueResult] {
        let time = now()
        return try write { db in
            try jobs.map { job in
                try Self.noteTrackFile(db, path: job.path, size: job.length, mtimeNs: job.mtimeNs, at: time, onlyIfChanged: true)
                return try Self.enqueue(db, job, at: time)
            }
        }
    }

    static func enqueue(_ db: Database, _ job: UploadJob, at time: Date) throws -> EnqueueResult {
        let sql = """
            SELECT * FROM jobs WHERE path = ? AND bucket = ? AND "key" = ? AND state != 'completed'
            ORDER BY createdAt DESC LIMIT 1
            """
        guard var existing = try UploadJob.fetchOne(db.cachedStatement(sql: sql), arguments: [job.path, job.bucket, job.key])
        else {
            try Self.insertJob(db, job)
            return EnqueueResult(job: job, isNew: true, abandonedUploadID: nil)
        }
        guard existing.length != job.length || existing.mtimeNs != job.mtimeNs else {
            return EnqueueResult(job: existing, isNew: false, abandonedUploadID: nil)
        }
        let abandoned = existing.uploadID
        existing.length = job.length
        existing.mtimeNs = job.mtimeNs
        existing.contentType = job.contentType
        existing.partSize = job.partSize
        existing.attempts = 0
        try Self.restage(db, &existing, at: time)
        return EnqueueResult(job: existing, isNew: false, abandonedUploadID: abandoned)
    }

    /// Inserts a new job row. Hand-written and cached: a folder's push inserts thousands, and
    /// GRDB's generic record insert was most of the enqueue's CPU.
    static func insertJob(_ db: Database, _ job: UploadJob) throws {
        try db.cachedStatement(sql: """
            INSERT INTO jobs (id, path, bucket, "key", contentType, length, mtimeNs, state, uploadID, partSize,
                              attempts, nextAttemptAt, lastError, bytesSent, createdAt, updatedAt)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                job.id.uuidString, job.path, job.bucket, job.key, job.contentType, job.length, job.mtimeNs,
                job.state.rawValue, job.uploadID, job.partSize, job.attempts, job.nextAttemptAt.map(StoreDate.text),
                job.lastError, job.bytesSent, StoreDate.text(job.createdAt), StoreDate.text(job.updatedAt),
            ])
    }

    /// Marks a job uploading (one more attempt, error cleared) and its track too, in one commit.
    public func startJob(id: UUID) throws(StoreError) -> UploadJob {
        let time = now()
        return try write { db in
            try Self.markStarted(db, id: id, at: time)
            guard let job = try Self.fetchJob(db, id: id) else { throw StoreError.notFound("job \(id)") }
            return job
        }
    }

    /// The job and its track uploading, with one more attempt and no last error.
    static func markStarted(_ db: Database, id: UUID, at time: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE jobs SET state = 'uploading', attempts = attempts + 1, lastError = NULL, updatedAt = ?
            WHERE id = ?
            """).execute(arguments: [StoreDate.text(time), id.uuidString])
        guard db.changesCount > 0 else { throw StoreError.notFound("job \(id)") }
        try db.cachedStatement(sql: """
            UPDATE tracks SET uploadState = 'uploading', lastError = NULL, updatedAt = ?
            WHERE path = (SELECT path FROM jobs WHERE id = ?)
            """).execute(arguments: [StoreDate.text(time), id.uuidString])
    }

    /// The job with this id.
    public func job(id: UUID) throws(StoreError) -> UploadJob? {
        try read { db in try Self.fetchJob(db, id: id) }
    }

    /// Jobs a run should take, in seed 003's order: initiated (resume first), then staged,
    /// then retryable failures whose `nextAttemptAt` has come; oldest first within each.
    public func pendingJobs(now: Date) throws(StoreError) -> [UploadJob] {
        try read { db in
            try UploadJob.fetchAll(
                db,
                sql: """
                    SELECT * FROM jobs
                    WHERE state IN ('initiated', 'staged')
                       OR (state = 'failedRetryable' AND (nextAttemptAt IS NULL OR nextAttemptAt <= ?))
                    ORDER BY CASE state WHEN 'initiated' THEN 0 WHEN 'staged' THEN 1 ELSE 2 END, createdAt, rowid
                    """,
                arguments: [now])
        }
    }

    /// Jobs in any of `states`, oldest first (`queue` shows the uploading ones).
    public func jobs(in states: [UploadJobState]) throws(StoreError) -> [UploadJob] {
        try read { db in
            try UploadJob.filter(states.map(\.rawValue).contains(Column("state"))).order(Column("createdAt")).fetchAll(db)
        }
    }

    /// Failed jobs, the latest failure first.
    public func failedJobs() throws(StoreError) -> [UploadJob] {
        try read { db in
            try UploadJob.fetchAll(
                db, sql: "SELECT * FROM jobs WHERE state IN ('failedRetryable', 'failedPermanent') ORDER BY updatedAt DESC")
        }
    }

    /// Changes a job in one transaction and returns it. The id cannot change; when the
    /// upload id does, the recorded parts (which belonged to the old upload) are dropped.
    @discardableResult
    public func updateJob(id: UUID, _ change: (inout UploadJob) throws -> Void) throws(StoreError) -> UploadJob {
        let time = now()
        return try write { db in
            guard var job = try Self.fetchJob(db, id: id) else { throw StoreError.notFound("job \(id)") }
            let before = job
            try change(&job)
            job.id = id
            job.updatedAt = time
            if job.uploadID != before.uploadID {
                try Self.deleteParts(db, jobID: id)
                if job.uploadID == nil { job.bytesSent = 0 }
            }
            try job.update(db)
            return job
        }
    }

    /// Stores what the state machine decided, with the error text (cleared when nil).
    @discardableResult
    public func updateJob(id: UUID, applying machine: UploadJobMachine, lastError: String? = nil) throws(StoreError)
        -> UploadJob
    {
        try updateJob(id: id) { job in
            job.apply(machine)
            job.lastError = lastError
        }
    }

    /// Records a finished part and raises the job's `bytesSent` in the same transaction.
    public func recordPart(jobID: UUID, partNumber: Int, size: Int64, etag: String, checksum: String?) throws(StoreError) {
        let time = now()
        try write { db in
            guard try Self.fetchJob(db, id: jobID) != nil else { throw StoreError.notFound("job \(jobID)") }
            let part = PartRecord(jobID: jobID, partNumber: partNumber, size: size, etag: etag, checksum: checksum)
            try part.insert(db, onConflict: .replace)
            try db.execute(
                sql: """
                    UPDATE jobs SET updatedAt = ?,
                        bytesSent = MAX(bytesSent, (SELECT COALESCE(SUM(size), 0) FROM parts WHERE jobID = ?))
                    WHERE id = ?
                    """,
                arguments: [time, jobID.uuidString, jobID.uuidString])
        }
    }

    /// The recorded parts of a job, by part number.
    public func parts(jobID: UUID) throws(StoreError) -> [PartRecord] {
        try read { db in
            try PartRecord.fetchAll(
                db, sql: "SELECT * FROM parts WHERE jobID = ? ORDER BY partNumber", arguments: [jobID.uuidString])
        }
    }

    /// Notes progress (bytes on the server) without changing the state.
    public func setProgress(jobID: UUID, bytesSent: Int64) throws(StoreError) {
        let time = now()
        try write { db in
            try db.cachedStatement(sql: "UPDATE jobs SET bytesSent = ?, updatedAt = ? WHERE id = ?")
                .execute(arguments: [bytesSent, StoreDate.text(time), jobID.uuidString])
            if db.changesCount == 0 { throw StoreError.notFound("job \(jobID)") }
        }
    }
}
