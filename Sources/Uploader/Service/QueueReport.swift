import Foundation

/// Everything `r2up queue` shows (seed 003's HUD): counts, what is uploading now,
/// what comes next, what failed and why, and the last completed upload.
public struct QueueReport: Sendable, Encodable {
    public struct Counts: Sendable, Encodable, Equatable {
        public var queued: Int
        public var uploading: Int
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

        init(_ job: UploadJob) {
            id = job.id
            path = job.path
            key = job.key
            state = job.state.rawValue
            size = job.length
            bytesSent = job.bytesSent
            attempts = job.attempts
            lastError = job.lastError
            nextAttemptAt = job.nextAttemptAt
        }
    }

    public var counts: Counts
    public var lastError: String?
    public var uploading: [Entry]
    public var upNext: [Entry]
    public var failed: [Entry]
    public var lastCompleted: UploadItem?

    /// The report of a store that does not exist yet: nothing queued, nothing done.
    public static let empty = QueueReport(
        counts: Counts(queued: 0, uploading: 0, failed: 0), lastError: nil, uploading: [], upNext: [], failed: [],
        lastCompleted: nil)

    private init(
        counts: Counts, lastError: String?, uploading: [Entry], upNext: [Entry], failed: [Entry],
        lastCompleted: UploadItem?
    ) {
        self.counts = counts
        self.lastError = lastError
        self.uploading = uploading
        self.upNext = upNext
        self.failed = failed
        self.lastCompleted = lastCompleted
    }

    /// Reads the report from the store; safe while another process uploads.
    public init(store: Store, now: Date = Date()) throws(StoreError) {
        let uploadingJobs = try store.jobs(in: [.uploading, .verifying])
        let next = try store.jobs(in: [.initiated, .staged])
        let failedJobs = try store.failedJobs()
        counts = Counts(queued: next.count, uploading: uploadingJobs.count, failed: failedJobs.count)
        uploading = uploadingJobs.map(Entry.init)
        // Seed 003's order: initiated (a multipart upload to finish) first, then staged, oldest first.
        upNext = next.sorted {
            ($0.state == .initiated ? 0 : 1, $0.createdAt) < ($1.state == .initiated ? 0 : 1, $1.createdAt)
        }.map(Entry.init)
        failed = failedJobs.map(Entry.init)
        lastError = failedJobs.max { $0.updatedAt < $1.updatedAt }?.lastError
        lastCompleted = try store.recentUploads(limit: 1).first
    }
}
