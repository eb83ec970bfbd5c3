public import Foundation
import Synchronization
public import R2UpModel
public import R2UpStore
import R2UpTransfer

/// The durable upload queue (seed 003): jobs live in the store, so a run that dies is
/// continued by the next one — a multipart upload resumes from its recorded parts.
///
/// Each job is driven by its `UploadJobMachine`: the queue feeds it what happened and does
/// what it answers; nothing else decides a job's state. Store writes go through a
/// `StoreWriter`, off the transfer thread.
public final class UploadQueue: Sendable {
    public let store: Store
    public let service: UploadService
    public let policy: JobRetryPolicy
    let writer: StoreWriter
    /// What each job's key must hold when it is written, as its enqueue found (`WriteCondition`);
    /// a job queued by an earlier run and not enqueued again in this one carries none.
    /// (A nil value is decided too: `--overwrite` sends no condition.)
    let conditions = Mutex<[UUID: WriteCondition?]>([:])
    /// Jobs whose key holds another track's upload: an object there is never taken for theirs.
    let keysHeldElsewhere = Mutex<Set<UUID>>([])

    /// Each request already retries a few times with backoff (`RequestRetryPolicy`); a job that
    /// still fails gets one more go in the run (a multipart upload resumes from its parts).
    public static let defaultPolicy = JobRetryPolicy(maxInProcessAttempts: 2)

    /// Files up to this size are uploaded by a task on the transfer thread (hashing 1 MiB takes
    /// well under a millisecond); bigger ones by tasks on the shared pool.
    static let transferThreadLimit: Int64 = 1 << 20

    /// Restarts of one job in a run (the machine allows one per NoSuchUpload streak): a bound.
    static let maxRestarts = 3

    public init(store: Store, service: UploadService, policy: JobRetryPolicy = UploadQueue.defaultPolicy) {
        self.store = store
        self.service = service
        self.policy = policy
        writer = StoreWriter(store: store)
    }

    /// Checks the file and queues it. Bad input (missing file, FIFO, bad key) throws before
    /// anything is written; a job already queued for the same file is reused.
    public func enqueue(
        _ request: PushRequest, intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) async throws -> EnqueueResult {
        try await enqueue([request], intent: intent, replace: replace)[0].get()
    }

    /// Notes what a job's key must hold when this run writes it (sync's enqueue).
    public func expect(_ condition: WriteCondition?, for id: UUID, keyHeldElsewhere: Bool = false) {
        conditions.withLock { _ = $0.updateValue(condition, forKey: id) }
        if keyHeldElsewhere { keysHeldElsewhere.withLock { _ = $0.insert(id) } }
    }

    /// Checks and queues many files with one store commit. Each result is the queued job with
    /// what this run may do with it, or why that file was refused (nothing written for it);
    /// a store failure throws and queues nothing. A folder's file (`PushRequest.seen`) is not
    /// opened here: its job opens it, and fails like any upload when it cannot.
    public func enqueue(
        _ requests: [PushRequest], intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) async throws(StoreError) -> [Result<EnqueueResult, any Error>] {
        var results: [Result<EnqueueResult, any Error>] = []
        var accepted: [(index: Int, job: UploadJob)] = []
        var unlessUploaded: Set<UUID> = []
        let created = Date()
        for request in requests {
            do {
                let path = FilePath.absolute(request.path)
                // A folder's file is queued as its scan saw it; a named one is checked now.
                let seen = try request.seen ?? LocalFile(path: path).seen
                let key = try ObjectKey.validated(request.key)
                let job = UploadJob(
                    path: path, bucket: service.bucket, key: key,
                    contentType: request.attributes.contentType ?? ContentType.forFile(named: path),
                    length: seen.size, mtimeNs: seen.mtimeNs, createdAt: created)
                accepted.append((results.count, job))
                if request.unlessUploaded { unlessUploaded.insert(job.id) }
                results.append(.success(EnqueueResult(job: job, isNew: true)))
            } catch {
                results.append(.failure(error))
            }
        }
        guard !accepted.isEmpty else { return results }
        let jobs = accepted.map(\.job)
        let ifNotUploaded = unlessUploaded
        let stored = try await writer.perform { store throws(StoreError) in
            try store.enqueue(jobs, intent: intent, replace: replace, unlessUploaded: ifNotUploaded)
        }
        for (entry, outcome) in zip(accepted, stored) {
            results[entry.index] = .success(outcome)
            if outcome.disposition == .ready {
                expect(outcome.condition, for: outcome.job.id, keyHeldElsewhere: outcome.keyHeldElsewhere)
            }
            if let abandoned = outcome.abandonedUploadID {
                await abort(bucket: outcome.job.bucket, key: outcome.job.key, uploadID: abandoned)
            }
        }
        return results
    }

    /// `enqueue(_:intent:replace:)` a commit at a time, into the `feed` of a run that is going
    /// (`run(_:feeding:…)`): a small first commit so the first uploads start at once, then
    /// bigger ones (`JobFeed.chunks`). Each queued job goes to the run; `notQueued` hears, in
    /// order, every request that was not: refused (bad file or key), held by another live
    /// r2up, or in conflict with another track's key. A store failure stops the queueing and the run.
    public func enqueue(
        _ requests: [PushRequest], intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded,
        into feed: JobFeed, notQueued: @escaping @Sendable (PushRequest, Result<EnqueueResult, any Error>) -> Void
    ) async {
        await feed.fill(count: requests.count, concurrency: service.options.concurrency ?? 64) {
            (range) throws(StoreError) -> [UploadJob] in
            let chunk = Array(requests[range])
            let results = try await enqueue(chunk, intent: intent, replace: replace)
            var ready: [UploadJob] = []
            for (request, result) in zip(chunk, results) {
                switch result {
                case .success(let outcome):
                    switch outcome.disposition {
                    case .ready: ready.append(outcome.job)
                    case .uploaded: break  // another r2up uploaded it meanwhile: done
                    case .heldBy, .conflict, .waitsForRetry, .waitsUntil: notQueued(request, result)
                    }
                case .failure: notQueued(request, result)
                }
            }
            return ready
        }
    }
}
