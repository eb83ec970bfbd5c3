public import Foundation
internal import GRDB
public import R2UpModel

/// What `enqueue` did.
public struct EnqueueResult: Sendable, Equatable {
    /// The stored job: the new one, or the unfinished one it matched.
    public var job: UploadJob
    /// Whether a new row was made.
    public var isNew: Bool
    /// The multipart upload of a job that was reset because its file changed; abort it.
    public var abandonedUploadID: String?
    /// Whether this run may upload it now.
    public var disposition: JobDisposition = .ready
    /// What the write must find at the key (nil: nothing checked, `--overwrite`).
    public var condition: WriteCondition?
    /// Another track's upload is at the key (`--no-clobber` or `--overwrite` let the file try):
    /// an object found there is never taken for this file's own lost upload.
    public var keyHeldElsewhere = false

    package init(job: UploadJob, isNew: Bool, abandonedUploadID: String? = nil, disposition: JobDisposition = .ready, condition: WriteCondition? = nil, keyHeldElsewhere: Bool = false) {
        self.job = job
        self.isNew = isNew
        self.abandonedUploadID = abandonedUploadID
        self.disposition = disposition
        self.condition = condition
        self.keyHeldElsewhere = keyHeldElsewhere
    }
}

extension Store {
    /// Queues many jobs in one transaction and records each file's size and mtime on its track
    /// (created when new): one commit for a whole folder.
    /// The one batch enqueue of push, sync and watch (`Intake` in R2UpKit).
    /// - Parameters:
    ///   - unlessUploaded: jobs planned because their track was not uploaded as the file is (a
    ///     folder's files): one whose track another run has uploaded since is not queued
    ///     (`JobDisposition.uploaded`). A file named on its own is uploaded again when asked.
    ///   - places: where each job's file lives (a scan's device and inode), recorded on its
    ///     track so a later sync knows the file after a rename (`MovePlan`).
    public func enqueue(
        _ jobs: [UploadJob], intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded, unlessUploaded: Set<UUID> = [],
        places: [UUID: FilePlace] = [:]
    ) throws(StoreError) -> [EnqueueResult] {
        let time = now()
        return try write { db in
            try jobs.map { job in
                if unlessUploaded.contains(job.id), try Self.isUploadedAsIs(db, job) {
                    return EnqueueResult(job: job, isNew: false, abandonedUploadID: nil, disposition: .uploaded)
                }
                try Self.noteTrackFile(db, path: job.path, size: job.length, mtimeNs: job.mtimeNs, at: time)
                if let place = places[job.id] {
                    try db.cachedStatement(sql: "UPDATE tracks SET device = ?, inode = ? WHERE path = ?")
                        .execute(arguments: [place.device, place.inode, job.path])
                }
                return try Self.enqueue(db, job, at: time, intent: intent, replace: replace)
            }
        }
    }

    /// The one enqueue of push, sync and watch: reuses the unfinished job of the same file and
    /// key, leaves it to a live process that holds it, honours its retry rules (`intent`), and
    /// leases what this run will upload. Every state change goes through the job's machine.
    /// A key that holds another track's upload refuses the file here, in the same transaction
    /// as the queueing, so two processes cannot both pass the check (`replace` says otherwise).
    static func enqueue(
        _ db: Database, _ job: UploadJob, at time: Date, intent: EnqueueIntent, replace: ReplacePolicy = .guarded,
        owner: ProcessIdentity = .current
    ) throws -> EnqueueResult {
        let condition: WriteCondition?
        let claim = try Self.keyClaim(db, bucket: job.bucket, key: job.key, path: job.path)
        switch claim {
        case .other(let otherPath) where replace == .guarded:
            let conflict = KeyConflict(
                key: job.key, otherPath: otherPath, uploadedAt: try Self.lastUploadDate(db, bucket: job.bucket, key: job.key))
            // Nothing is queued: a file with no upload shows the refusal until a push with --overwrite
            // or another key; a track uploaded to this bucket keeps its state (its object is intact).
            try db.cachedStatement(sql: """
                UPDATE tracks SET uploadState = 'error', lastError = ?, updatedAt = ?
                WHERE path = ? AND NOT (uploadState = 'uploaded' AND bucket IS ?)
                """).execute(arguments: ["\(job.path): \(conflict.description)", StoreDate.text(time), job.path, job.bucket])
            return EnqueueResult(job: job, isNew: false, abandonedUploadID: nil, disposition: .conflict(conflict))
        case .own(let etag) where replace == .guarded:
            condition = etag.map(WriteCondition.etag)
        case .own, .other, .none:
            condition = replace == .overwrite ? nil : .absent
        }
        var wroteBefore = false
        var result = try Self.enqueueClaimed(db, job, at: time, intent: intent, owner: owner, wroteBefore: &wroteBefore)
        if case .other = claim { result.keyHeldElsewhere = true }
        // A run killed between the server's answer and its record left its own object at a key
        // no track claims yet: If-None-Match would refuse the file's own bytes. That job is sent
        // unconditioned once, as before this guard.
        result.condition = wroteBefore && condition == .absent && replace == .guarded ? nil : condition
        return result
    }

    /// SQL: whether a track's key is one it holds, not only the source of a download there (a
    /// pulled copy: downloaded, never uploaded). A pulled copy never refuses another track's upload
    /// nor loses its record when that track writes the key.
    static let holdsKey = "(uploadState IN ('uploaded', 'uploading') OR downloadState = 'none')"

    /// Who holds a key, as the store knows it.
    private enum KeyClaim {
        case none
        /// This track's upload, with the ETag it recorded.
        case own(etag: String?)
        case other(path: String)
    }

    /// One cached query on `tracks_on_key`: each file of a push asks it. A track tied to the key
    /// only by a download (`Store.holdsKey`) holds nothing: a pulled copy is not an upload.
    private static func keyClaim(_ db: Database, bucket: String, key: String, path: String) throws -> KeyClaim {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: #"SELECT path, etag FROM tracks WHERE bucket = ? AND "key" = ? AND (path = ? OR "# + holdsKey + ") LIMIT 2"),
            arguments: [bucket, key, path])
        // Bytes, not String ==: an NFD path and its NFC twin are two files (and two tracks).
        let own = Array(path.utf8)
        if let other = rows.first(where: { ($0["path"] as String?).map { Array($0.utf8) } != own }),
            let otherPath = other["path"] as String?
        {
            return .other(path: otherPath)
        }
        if let own = rows.first { return .own(etag: own["etag"] as String?) }
        return .none
    }

    /// The conditions for jobs queued by an earlier run and run again (`r2up retry`): the ETag
    /// the track wrote at its key, else an empty key. A key another track holds gets
    /// `If-None-Match: *` too: its object is there, so the server refuses the write.
    /// `heldElsewhere`: the jobs whose key another track holds.
    public func writeConditions(for jobs: [UploadJob]) throws(StoreError) -> (
        conditions: [UUID: WriteCondition], heldElsewhere: Set<UUID>
    ) {
        try read { db in
            var conditions: [UUID: WriteCondition] = [:]
            var heldElsewhere: Set<UUID> = []
            for job in jobs {
                switch try Self.keyClaim(db, bucket: job.bucket, key: job.key, path: job.path) {
                case .own(let etag?):
                    conditions[job.id] = .etag(etag)
                case .other:
                    conditions[job.id] = .absent
                    heldElsewhere.insert(job.id)
                case .own(nil), .none:
                    conditions[job.id] = .absent
                }
            }
            return (conditions, heldElsewhere)
        }
    }

    /// When the latest upload to a key finished (history), for a conflict's message.
    private static func lastUploadDate(_ db: Database, bucket: String, key: String) throws -> Date? {
        try Date.fetchOne(
            db, sql: "SELECT uploadDate FROM history WHERE bucket = ? AND r2Key = ? ORDER BY uploadDate DESC LIMIT 1",
            arguments: [bucket, key])
    }

    /// `enqueue` once the key is known to be this file's to write.
    private static func enqueueClaimed(
        _ db: Database, _ job: UploadJob, at time: Date, intent: EnqueueIntent, owner: ProcessIdentity,
        wroteBefore: inout Bool
    ) throws -> EnqueueResult {
        let sql = """
            SELECT * FROM jobs WHERE path = ? AND bucket = ? AND "key" = ? AND state != 'completed'
            ORDER BY createdAt DESC LIMIT 1
            """
        guard var existing = try UploadJob.fetchOne(db.cachedStatement(sql: sql), arguments: [job.path, job.bucket, job.key])
        else {
            var job = job
            job.lease = JobLease(owner: owner, heartbeatAt: time)
            try Self.insertJob(db, job)
            return EnqueueResult(job: job, isNew: true, abandonedUploadID: nil)
        }
        wroteBefore = existing.state == .uploading || existing.state == .verifying
        if let lease = existing.lease, lease.owner != owner, lease.isLive(now: time) {
            return EnqueueResult(job: existing, isNew: false, abandonedUploadID: nil, disposition: .heldBy(pid: lease.owner.pid))
        }
        var machine = existing.machine()
        // A run that died mid-upload left it in flight: it is interrupted, not uploading.
        if existing.state.isInFlight { try Self.expect(.suspend, machine.interrupted(), job: existing.id) }
        var abandoned: String?
        let changed = existing.length != job.length || existing.mtimeNs != job.mtimeNs
        if changed {
            // Whatever was sent belongs to the old content: the machine names the upload to abort.
            let restaged = machine.fileChanged()
            guard case .restage(let abortUploadID) = restaged else {
                throw StoreError.conflict("job \(existing.id): the job machine answered \(restaged) to a changed file")
            }
            abandoned = abortUploadID
            existing.length = job.length
            existing.mtimeNs = job.mtimeNs
            // A copy queued for the file as it was would put the old bytes at the key: the file goes.
            existing.copySourceKey = job.copySourceKey
            existing.copySourceETag = job.copySourceETag
            existing.digest = job.digest
            existing.contentType = job.contentType
            existing.partSize = job.partSize
        } else if machine.state == .failedPermanent {
            guard intent == .asked else {
                return EnqueueResult(job: existing, isNew: false, abandonedUploadID: nil, disposition: .waitsForRetry)
            }
            try Self.expect(.requeued, machine.requeue(), job: existing.id)
        } else if machine.state == .failedRetryable {
            if intent == .scheduled, let next = existing.nextAttemptAt, next > time {
                return EnqueueResult(job: existing, isNew: false, abandonedUploadID: nil, disposition: .waitsUntil(next))
            }
            if intent == .asked { try Self.expect(.requeued, machine.requeue(), job: existing.id) }
        }
        let before = existing.state
        existing.apply(machine)
        if changed {
            // A new file is a new upload: nothing sent, no failures counted.
            existing.bytesSent = 0
            existing.attempts = 0
        }
        if machine.state != before || changed { existing.lastError = nil }
        existing.lease = JobLease(owner: owner, heartbeatAt: time)
        existing.updatedAt = time
        try existing.update(db)
        if changed { try Self.deleteParts(db, jobID: existing.id) }
        if existing.state != before { try Self.syncTrackState(db, job: existing, error: nil) }
        return EnqueueResult(job: existing, isNew: false, abandonedUploadID: abandoned)
    }

    /// Whether the job's track is uploaded, to the job's bucket and key, with the file's size and mtime.
    static func isUploadedAsIs(_ db: Database, _ job: UploadJob) throws -> Bool {
        try Int.fetchOne(
            db.cachedStatement(sql: """

                SELECT 1 FROM tracks WHERE path = ? AND uploadState = 'uploaded' AND size = ? AND mtimeNs = ?
                    AND bucket = ? AND "key" = ?
                """), arguments: [job.path, job.length, job.mtimeNs, job.bucket, job.key]) != nil
    }

    /// Inserts a new job row. Hand-written and cached: a folder's push inserts thousands, and
    /// GRDB's generic record insert was most of the enqueue's CPU.
    static func insertJob(_ db: Database, _ job: UploadJob) throws {
        try db.cachedStatement(sql: """
            INSERT INTO jobs (id, path, bucket, "key", contentType, length, mtimeNs, state, uploadID, partSize,
                              attempts, nextAttemptAt, lastError, bytesSent, createdAt, updatedAt,
                              ownerPID, ownerStartTime, heartbeatAt, copySourceKey, copySourceETag, digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [
                job.id.uuidString, job.path, job.bucket, job.key, job.contentType, job.length, job.mtimeNs,
                job.state.rawValue, job.uploadID, job.partSize, job.attempts, job.nextAttemptAt.map(StoreDate.text),
                job.lastError, job.bytesSent, StoreDate.text(job.createdAt), StoreDate.text(job.updatedAt),
                job.lease?.owner.pid, job.lease?.owner.startTime, job.lease.map { StoreDate.text($0.heartbeatAt) },
                job.copySourceKey, job.copySourceETag, job.digest,
            ])
    }

    /// The job in the state its machine started it in (a single PUT is uploading at once) and
    /// its track as the one rule says for a job a run holds, with no last error.
    static func markStarted(_ db: Database, _ job: UploadJob, at time: Date) throws {
        try db.cachedStatement(sql: """
            UPDATE jobs SET state = ?, lastError = NULL, updatedAt = ? WHERE id = ?
            """).execute(arguments: [job.state.rawValue, StoreDate.text(time), job.id.uuidString])
        guard db.changesCount > 0 else { throw StoreError.notFound("job \(job.id)") }
        try db.cachedStatement(sql: """
            UPDATE tracks SET uploadState = ?, lastError = NULL, updatedAt = ?
            WHERE path = (SELECT path FROM jobs WHERE id = ?)
            """).execute(arguments: [job.trackState(heldByRun: true).rawValue, StoreDate.text(time), job.id.uuidString])
    }

    /// The machine's answer the store's step relies on; any other is a defect, said out loud
    /// instead of writing a state the machine did not give.
    static func expect(_ expected: UploadJobAction, _ answer: UploadJobAction, job id: UUID) throws {
        guard answer == expected else {
            throw StoreError.conflict("job \(id): the job machine answered \(answer), not \(expected)")
        }
    }

    /// The job with this id.
    public func job(id: UUID) throws(StoreError) -> UploadJob? {
        try read { db in try Self.fetchJob(db, id: id) }
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

    /// Records a finished part and raises the job's `bytesSent` in the same transaction.
    public func recordPart(
        jobID: UUID, partNumber: Int, size: Int64, etag: String, checksum: String?, state: UploadJobState? = nil
    ) throws(StoreError) {
        let time = now()
        try write { db in
            guard try Self.fetchJob(db, id: jobID) != nil else { throw StoreError.notFound("job \(jobID)") }
            let part = PartRecord(jobID: jobID, partNumber: partNumber, size: size, etag: etag, checksum: checksum)
            try part.insert(db, onConflict: .replace)
            try db.execute(
                sql: """
                    UPDATE jobs SET updatedAt = ?, state = COALESCE(?, state),
                        bytesSent = MAX(bytesSent, (SELECT COALESCE(SUM(size), 0) FROM parts WHERE jobID = ?))
                    WHERE id = ?
                    """,
                arguments: [time, state?.rawValue, jobID.uuidString, jobID.uuidString])
        }
    }

    /// The recorded parts of a job, by part number.
    public func parts(jobID: UUID) throws(StoreError) -> [PartRecord] {
        try read { db in
            try PartRecord.fetchAll(
                db, sql: "SELECT * FROM parts WHERE jobID = ? ORDER BY partNumber", arguments: [jobID.uuidString])
        }
    }
}
