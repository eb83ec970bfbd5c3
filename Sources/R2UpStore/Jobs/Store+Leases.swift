public import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// Takes the lease of each job for this process, in one transaction: a job another live
    /// process holds is left to it; one whose owner died is taken over (back to where it
    /// resumes, its parts kept). Returns each job as stored, with what the run may do.
    public func claim(_ ids: [UUID], owner: ProcessIdentity = .current) throws(StoreError) -> [(job: UploadJob, disposition: JobDisposition)] {
        let time = now()
        return try write { db in
            try ids.compactMap { id in
                guard var job = try Self.fetchJob(db, id: id), job.state != .completed else { return nil }
                let disposition = try Self.claim(db, &job, owner: owner, at: time)
                return (job, disposition)
            }
        }
    }

    /// Leases `job` to `owner` unless a live other process holds it.
    static func claim(_ db: Database, _ job: inout UploadJob, owner: ProcessIdentity, at time: Date) throws -> JobDisposition {
        if let lease = job.lease, lease.owner != owner, lease.isLive(now: time) {
            return .heldBy(pid: lease.owner.pid)
        }
        job.lease = JobLease(owner: owner, heartbeatAt: time)
        job.updatedAt = time
        if job.state.isInFlight {
            // Its run died in the middle: interrupted, resumed from its parts.
            var machine = job.machine()
            try expect(.suspend, machine.interrupted(), job: job.id)
            job.apply(machine)
            try job.update(db)
            try syncTrackState(db, job: job, error: nil)
        } else {
            try job.update(db)
        }
        return .ready
    }

    /// Gives up this process's leases (the end of a run): what is left is queued, not uploading.
    public func releaseLeases(owner: ProcessIdentity = .current) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE jobs SET ownerPID = NULL, ownerStartTime = NULL, heartbeatAt = NULL
                    WHERE ownerPID = ? AND ownerStartTime = ?
                    """,
                arguments: [owner.pid, owner.startTime])
        }
    }

    /// Renews this process's leases and notes the bytes sent of the jobs in flight.
    public func heartbeat(owner: ProcessIdentity = .current, progress: [UUID: Int64]) throws(StoreError) {
        let time = StoreDate.text(now())
        try write { db in
            try db.cachedStatement(sql: "UPDATE jobs SET heartbeatAt = ? WHERE ownerPID = ? AND ownerStartTime = ?")
                .execute(arguments: [time, owner.pid, owner.startTime])
            let update = try db.cachedStatement(sql: "UPDATE jobs SET bytesSent = MAX(bytesSent, ?) WHERE id = ? AND state != 'completed'")
            for (id, bytes) in progress { try update.execute(arguments: [bytes, id.uuidString]) }
        }
    }

    /// Stores a job as its driver holds it — the state its machine decided — and gives its
    /// track the matching upload state, in one transaction. The parts go when the upload id changed.
    public func saveJob(_ job: UploadJob, trackState: UploadState, trackError: String?) throws(StoreError) {
        let time = now()
        try write { db in
            guard let stored = try Self.fetchJob(db, id: job.id) else { throw StoreError.notFound("job \(job.id)") }
            var job = job
            job.updatedAt = time
            if stored.uploadID != job.uploadID {
                try Self.deleteParts(db, jobID: job.id)
                if job.uploadID == nil { job.bytesSent = 0 }
            }
            try job.update(db)
            try db.cachedStatement(sql: "UPDATE tracks SET uploadState = ?, lastError = ?, updatedAt = ? WHERE path = ?")
                .execute(arguments: [trackState.rawValue, trackError, StoreDate.text(time), job.path])
        }
    }

    /// The track of a job no run holds shows the job's state by the one rule (seed 000,
    /// `UploadJob.trackState(heldByRun:)`): an error when failed, not uploaded when queued again.
    static func syncTrackState(_ db: Database, job: UploadJob, error: String?) throws {
        guard job.state != .completed else { return }
        try db.cachedStatement(sql: "UPDATE tracks SET uploadState = ?, lastError = ?, updatedAt = ? WHERE path = ?")
            .execute(arguments: [job.trackState().rawValue, error, StoreDate.text(job.updatedAt), job.path])
    }

    // MARK: - Multipart uploads left on the server

    /// A multipart upload r2up began and no longer needs, to abort on this or a later run.
    public struct AbandonedUpload: Sendable, Equatable {
        public var bucket: String
        public var key: String
        public var uploadID: String
        public var attempts: Int
        public var lastError: String?
    }

    /// Notes an upload to abort (its abort failed, or was not tried yet).
    public func recordAbandoned(bucket: String, key: String, uploadID: String, error: String?) throws(StoreError) {
        let time = now()
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO abandonedUploads (bucket, "key", uploadID, attempts, lastError, createdAt)
                    VALUES (?, ?, ?, 1, ?, ?)
                    ON CONFLICT DO UPDATE SET attempts = attempts + 1, lastError = excluded.lastError
                    """,
                arguments: [bucket, key, uploadID, error, StoreDate.text(time)])
        }
    }

    /// The uploads still to abort in `bucket` (all buckets when nil).
    public func abandonedUploads(bucket: String? = nil) throws(StoreError) -> [AbandonedUpload] {
        try read { db in
            try Row.fetchAll(
                db, sql: #"SELECT bucket, "key", uploadID, attempts, lastError FROM abandonedUploads WHERE ? IS NULL OR bucket = ? ORDER BY createdAt"#,
                arguments: [bucket, bucket]
            ).map { row in
                AbandonedUpload(bucket: row[0], key: row[1], uploadID: row[2], attempts: row[3], lastError: row[4])
            }
        }
    }

    /// Of multipart uploads listed on the server, those under a key this store knows (a track's
    /// or a job's, in `bucket`) that no unfinished job of this store is using.
    /// - Returns: their upload ids.
    public func orphanedUploads(bucket: String, among uploads: [(key: String, uploadID: String)]) throws(StoreError) -> Set<String> {
        try read { db in
            let owned = try db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM tracks WHERE bucket = ? AND "key" = ?)
                    OR EXISTS (SELECT 1 FROM jobs WHERE bucket = ? AND "key" = ?)
                """)
            let inUse = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM jobs WHERE uploadID = ? AND state != 'completed')")
            var orphans: Set<String> = []
            for upload in uploads {
                guard try Bool.fetchOne(owned, arguments: [bucket, upload.key, bucket, upload.key]) == true,
                    try Bool.fetchOne(inUse, arguments: [upload.uploadID]) == false
                else { continue }
                orphans.insert(upload.uploadID)
            }
            return orphans
        }
    }

    /// The upload is gone from the server: forget it.
    public func forgetAbandoned(bucket: String, key: String, uploadID: String) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: #"DELETE FROM abandonedUploads WHERE bucket = ? AND "key" = ? AND uploadID = ?"#,
                arguments: [bucket, key, uploadID])
        }
    }
}

extension Store {
    /// What `cancelJobs` did.
    public struct Cancellation: Sendable, Equatable {
        /// Jobs dropped.
        public var cancelled: [UploadJob] = []
        /// Jobs a live process is uploading: left alone.
        public var held: [(job: UploadJob, pid: Int32)] = []

        public static func == (lhs: Cancellation, rhs: Cancellation) -> Bool {
            lhs.cancelled == rhs.cancelled && lhs.held.map(\.job) == rhs.held.map(\.job)
        }
    }

    /// `r2up queue cancel`: drops jobs (and their recorded parts) in one transaction; their
    /// tracks are no longer uploading or failed. A job that a live process is uploading is
    /// left to it. The multipart uploads of dropped jobs are recorded to abort, so a cancel
    /// leaves nothing on the server even when the abort cannot be sent now.
    public func cancelJobs(_ ids: [UUID], owner: ProcessIdentity = .current) throws(StoreError) -> Cancellation {
        let time = now()
        return try write { db in
            var result = Cancellation()
            for id in ids {
                guard let job = try Self.fetchJob(db, id: id), job.state != .completed else { continue }
                if let lease = job.lease, lease.owner != owner, lease.isLive(now: time) {
                    result.held.append((job, lease.owner.pid))
                    continue
                }
                if let uploadID = job.uploadID {
                    try db.execute(
                        sql: """
                            INSERT INTO abandonedUploads (bucket, "key", uploadID, createdAt) VALUES (?, ?, ?, ?)
                            ON CONFLICT DO NOTHING
                            """,
                        arguments: [job.bucket, job.key, uploadID, StoreDate.text(time)])
                }
                try Self.deleteParts(db, jobID: id)
                try db.execute(sql: "DELETE FROM jobs WHERE id = ?", arguments: [id.uuidString])
                // A cancelled copy leaves the track at the object it copied from.
                try db.execute(
                    sql: """
                        UPDATE tracks SET uploadState = ?, lastError = NULL, updatedAt = ?
                        WHERE path = ? AND uploadState IN ('uploading', 'error')
                        """,
                    arguments: [(job.isCopy ? UploadState.uploaded : .none).rawValue, StoreDate.text(time), job.path])
                result.cancelled.append(job)
            }
            return result
        }
    }
}
