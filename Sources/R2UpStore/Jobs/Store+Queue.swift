public import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// Publishes a verified upload in ONE transaction: the job is stored completed, as its
    /// machine answered (`UploadJobMachine.verified()`), its parts go, the history row is
    /// written and the track is marked uploaded with its cloud copy. A crash leaves all of it
    /// or none of it. The store does not decide the state: a job its machine has not completed
    /// is refused (`StoreError.conflict`).
    /// - Parameters:
    ///   - job: the job as its machine left it, with the digest the upload computed (a copy keeps its track's).
    ///   - historyItem: the history row for it.
    /// - Returns: the completed job as stored.
    @discardableResult
    public func completeJob(_ job: UploadJob, historyItem: UploadItem) throws(StoreError) -> UploadJob {
        let time = now()
        return try write { db in
            guard let stored = try Self.fetchJob(db, id: job.id) else { throw StoreError.notFound("job \(job.id)") }
            guard stored.state != .completed else { throw StoreError.conflict("job \(job.id) is already completed") }
            var job = job
            job.lease = nil
            job.lastError = nil
            job.bytesSent = job.length
            job.updatedAt = time
            try Self.publish(db, job: job, item: historyItem, at: time)
            return job
        }
    }

    /// Small jobs' steps in ONE commit (`BatchedJobRecorder`): each start and each body sent
    /// stores its job in the state its machine answered (its track by the one rule, held by the
    /// run); each completion does what `completeJob` does, from the job as the queue holds it. Every step lands or fails on its own: when one
    /// fails, the batch is rolled back and each step is committed alone.
    /// - Returns: the completions' outcomes, in order.
    package func recordBatch(
        starts: [UploadJob], verifying: [UploadJob], completions: [(job: UploadJob, item: UploadItem)]
    ) throws(StoreError) -> [Result<Void, StoreError>] {
        let time = now()
        // A job that starts and completes within one batch is written once, completed: no reader
        // could see the steps between, they would commit together.
        let completing = Set(completions.map(\.job.id))
        let all: Result<Void, StoreError> = Result { () throws(StoreError) in
            try write { db in
                for job in starts where !completing.contains(job.id) { try Self.markStarted(db, job, at: time) }
                for job in verifying {
                    // Only over the state the body was sent from: a later step already stored wins.
                    try db.cachedStatement(sql: "UPDATE jobs SET state = ?, updatedAt = ? WHERE id = ? AND state = ?")
                        .execute(arguments: [
                            job.state.rawValue, StoreDate.text(time), job.id.uuidString, UploadJobState.uploading.rawValue,
                        ])
                }
                for (job, item) in completions { try Self.publish(db, job: job, item: item, at: time) }
            }
        }
        if case .success = all { return Array(repeating: .success(()), count: completions.count) }
        for job in starts {
            _ = try? write { db in try Self.markStarted(db, job, at: time) }
        }
        return completions.map { job, item in
            Result { () throws(StoreError) in try write { db in try Self.publish(db, job: job, item: item, at: time) } }
        }
    }

    /// The job completed (the state its machine answered), its parts gone, its history row,
    /// its track uploaded.
    static func publish(_ db: Database, job: UploadJob, item historyItem: UploadItem, at time: Date) throws {
        let id = job.id
        guard job.state == .completed else {
            throw StoreError.conflict("job \(id) is \(job.state.rawValue): only a verified upload is published")
        }
        let completed = job.state.rawValue
        // Hand-written, cached statements: this runs once per file, thousands of times a push.
        try db.cachedStatement(sql: """
            UPDATE jobs SET state = ?, nextAttemptAt = NULL, lastError = NULL, bytesSent = length,
                            ownerPID = NULL, ownerStartTime = NULL, heartbeatAt = NULL, updatedAt = ?
            WHERE id = ? AND state != ?
            """).execute(arguments: [completed, StoreDate.text(time), id.uuidString, completed])
        guard db.changesCount > 0 else { throw StoreError.conflict("job \(id) is already completed or gone") }
        try Self.deleteParts(db, jobID: id)
        try db.cachedStatement(sql: """
            INSERT INTO history (id, fileName, fileSize, r2Key, uploadDate, publicURL, bucket, etag, copiedFrom)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                historyItem.id.uuidString, historyItem.fileName, historyItem.fileSize, historyItem.r2Key,
                StoreDate.text(historyItem.uploadDate), historyItem.publicURL.absoluteString, historyItem.bucket,
                historyItem.etag, historyItem.copiedFrom,
            ])
        try db.cachedStatement(sql: """
            INSERT INTO tracks (path, size, mtimeNs, uploadState, bucket, "key", etag, lastError, updatedAt, digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
            ON CONFLICT(path) DO UPDATE SET
                size = excluded.size, mtimeNs = excluded.mtimeNs, uploadState = excluded.uploadState,
                bucket = excluded.bucket, "key" = excluded."key", etag = excluded.etag,
                lastError = NULL, updatedAt = excluded.updatedAt, digest = excluded.digest
            """).execute(arguments: [
                job.path, job.length, job.mtimeNs, job.trackState().rawValue, job.bucket, job.key, historyItem.etag,
                StoreDate.text(time), job.digest,
            ])
        // The object is this track's now: a track whose upload it replaced (--overwrite) no
        // longer claims it and shows as not uploaded; its history row stays.
        try db.cachedStatement(sql: """
            UPDATE tracks SET bucket = NULL, "key" = NULL, etag = NULL,
                uploadState = CASE WHEN uploadState = 'uploaded' THEN 'none' ELSE uploadState END, updatedAt = ?
            WHERE bucket = ? AND "key" = ? AND path != ? AND
            """ + holdsKey).execute(arguments: [StoreDate.text(time), job.bucket, job.key, job.path])
    }

    /// `r2up retry ID…`: failed jobs go back in the queue (initiated when their multipart
    /// upload survives, else staged) with attempts forgotten; their tracks' error clears.
    /// Ids that are unknown or not failed are skipped.
    /// - Returns: how many jobs were requeued.
    @discardableResult
    public func requeue(ids: [UUID]) throws(StoreError) -> Int {
        let time = now()
        return try write { db in
            var count = 0
            for id in ids {
                guard var job = try Self.fetchJob(db, id: id), job.state.isFailed else { continue }
                try Self.requeue(db, &job, at: time)
                count += 1
            }
            return count
        }
    }

    // MARK: - Helpers inside a transaction

    static func fetchJob(_ db: Database, id: UUID) throws -> UploadJob? {
        try UploadJob.fetchOne(db.cachedStatement(sql: "SELECT * FROM jobs WHERE id = ?"), arguments: [id.uuidString])
    }

    static func deleteParts(_ db: Database, jobID: UUID) throws {
        try db.cachedStatement(sql: "DELETE FROM parts WHERE jobID = ?").execute(arguments: [jobID.uuidString])
    }

    private static func requeue(_ db: Database, _ job: inout UploadJob, at time: Date) throws {
        if let lease = job.lease, !lease.isMine, lease.isLive(now: time) { return }
        var machine = job.machine()
        guard case .requeued = machine.requeue() else { return }
        job.apply(machine)
        job.lastError = nil
        job.updatedAt = time
        try job.update(db)
        // Seed 000: the red mark clears on retry (the track follows the queued job).
        try db.execute(
            sql: "UPDATE tracks SET uploadState = ?, lastError = NULL, updatedAt = ? WHERE path = ? AND uploadState = ?",
            arguments: [job.trackState().rawValue, time, job.path, UploadState.error.rawValue])
    }
}
