public import Foundation
package import R2UpStore
import R2UpModel

/// Everything `r2up queue` shows (seed 003's HUD): counts, what is uploading now,
/// what comes next, what failed and why, and the last completed upload.
public struct QueueReport: Sendable, Encodable {
    public struct Counts: Sendable, Encodable, Equatable {
        public var queued: Int
        public var uploading: Int
        /// In flight when their run died or stopped: the next run resumes them.
        public var interrupted: Int
        public var failed: Int
    }

    /// One job as the queue view lists it.
    public struct Entry: Sendable, Encodable, Equatable {
        public var id: UUID
        public var path: String
        public var key: String
        public var state: String
        public var size: Int64
        public var bytesSent: Int64
        public var attempts: Int
        public var lastError: String?
        public var nextAttemptAt: Date?
        /// The process working on it, while one is.
        public var ownerPID: Int32?
        /// Bytes a second over the last few seconds, where a watch (`QueueRates`) has seen it grow.
        public var bytesPerSecond: Double?
        /// A server-side copy (a moved track): the key it copies from; nil for an upload.
        public var copyOf: String?

        init(_ job: UploadJob, leaseIsLive: Bool) {
            id = job.id
            path = job.path
            key = job.key
            state = job.state.rawValue
            size = job.length
            bytesSent = job.bytesSent
            attempts = job.attempts
            lastError = job.lastError
            nextAttemptAt = job.nextAttemptAt
            ownerPID = leaseIsLive ? job.lease?.owner.pid : nil
            copyOf = job.copySourceKey
        }
    }

    public var counts: Counts
    public var lastError: String?
    public var uploading: [Entry]
    /// Jobs whose run died or stopped mid-upload ("interrupted, resumes on the next run").
    public var interrupted: [Entry]
    public var upNext: [Entry]
    public var failed: [Entry]
    public var lastCompleted: UploadItem?
    /// Multipart uploads r2up gave up on and could not abort yet (the next run tries again).
    public var leftOnServer: Int

    /// The report of a store that does not exist yet: nothing queued, nothing done.
    public static let empty = QueueReport(
        counts: Counts(queued: 0, uploading: 0, interrupted: 0, failed: 0), lastError: nil, uploading: [],
        interrupted: [], upNext: [], failed: [], lastCompleted: nil, leftOnServer: 0)

    private init(
        counts: Counts, lastError: String?, uploading: [Entry], interrupted: [Entry], upNext: [Entry], failed: [Entry],
        lastCompleted: UploadItem?, leftOnServer: Int
    ) {
        self.counts = counts
        self.lastError = lastError
        self.uploading = uploading
        self.interrupted = interrupted
        self.upNext = upNext
        self.failed = failed
        self.lastCompleted = lastCompleted
        self.leftOnServer = leftOnServer
    }

    /// Reads the report from the store; safe while another process uploads. A job is
    /// uploading only while a live process holds its lease: one whose run died is interrupted.
    package init(store: Store, now: Date = Date()) throws(StoreError) {
        let unfinished = try store.jobs(in: [.staged, .initiated, .uploading, .verifying])
        let failedJobs = try store.failedJobs()
        var uploadingJobs: [UploadJob] = []
        var interruptedJobs: [UploadJob] = []
        var next: [UploadJob] = []
        // Each owner's /proc entry is read once: a push queues thousands of jobs under one pid.
        var ownersAlive: [ProcessIdentity: Bool] = [:]
        var liveLeases: Set<UUID> = []
        for job in unfinished + failedJobs {
            guard let lease = job.lease else { continue }
            let alive = ownersAlive[lease.owner] ?? lease.owner.isAlive
            ownersAlive[lease.owner] = alive
            if lease.isLive(now: now, ownerAlive: alive) { liveLeases.insert(job.id) }
        }
        func entry(_ job: UploadJob) -> Entry { Entry(job, leaseIsLive: liveLeases.contains(job.id)) }
        for job in unfinished {
            if job.isInterrupted(leaseIsLive: liveLeases.contains(job.id)) {
                interruptedJobs.append(job)
            } else if job.state.isInFlight {
                uploadingJobs.append(job)
            } else {
                next.append(job)
            }
        }
        counts = Counts(
            queued: next.count, uploading: uploadingJobs.count, interrupted: interruptedJobs.count, failed: failedJobs.count)
        uploading = uploadingJobs.map(entry)
        // Their row still says where the dead run was (uploading, verifying): shown as what they are.
        interrupted = interruptedJobs.map { job in
            var interrupted = entry(job)
            interrupted.state = "interrupted"
            return interrupted
        }
        // Seed 003's order: initiated (a multipart upload to finish) first, then staged, oldest first.
        upNext = next.sorted {
            ($0.state == .initiated ? 0 : 1, $0.createdAt) < ($1.state == .initiated ? 0 : 1, $1.createdAt)
        }.map(entry)
        failed = failedJobs.map(entry)
        lastError = failedJobs.max { $0.updatedAt < $1.updatedAt }?.lastError
        lastCompleted = try store.recentUploads(limit: 1).first
        leftOnServer = try store.abandonedUploads().count
    }
}
