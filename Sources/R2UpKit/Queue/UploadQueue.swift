public import Foundation
import Synchronization
public import R2UpModel
public import R2UpStore
public import R2UpTransfer

/// What happened to one job in a run, in the order things happen.
public enum QueueEvent: Sendable {
    /// The job is in this run's hands (given to `run`, or queued by its feed); it starts in turn.
    case queued(UploadJob)
    case started(UploadJob)
    case completed(UploadJob, UploadItem, UploadOutcome)
    case failed(UploadJob, Diagnosis, nextAttemptAt: Date?)
}

/// The end of a run.
public struct QueueRunSummary: Sendable {
    public var completed: [UploadItem] = []
    public var failed: [(job: UploadJob, diagnosis: Diagnosis)] = []
    public var bytesSent: Int64 = 0
    /// Jobs `admit` turned away at their start; they stay queued for a later run.
    public var deferred: [UploadJob] = []
    /// Jobs another live process is uploading; left to it.
    public var heldElsewhere: [(job: UploadJob, pid: Int32)] = []
    /// The failure that stopped the whole run (credentials, bucket, endpoint, clock, store).
    public var stoppedBy: Failure?
    /// Whether the run was cancelled (Ctrl-C, SIGTERM).
    public var interrupted = false
    /// Jobs left queued because the run stopped or was interrupted; the next run resumes them.
    public var leftResumable = 0

    /// The run's exit status, aggregated from what happened (the most serious wins); a job
    /// left to another process is not a failure of this run.
    public var status: ExitStatus {
        var statuses = failed.map(\.diagnosis.status)
        if let stoppedBy { statuses.append(stoppedBy.diagnosis.status) }
        if interrupted { statuses.append(.interrupted) }
        return Failure.runStatus(statuses)
    }
}

/// The one line a run that did not finish ends with: why it stopped, or that it was
/// interrupted and what the next run resumes. nil for a run that finished.
public enum RunEnding {
    /// - Parameters:
    ///   - stoppedBy: why the run stopped early (its line), or nil.
    ///   - interrupted: whether Ctrl-C or SIGTERM ended it.
    ///   - leftResumable: the uploads left for the next run.
    ///   - resume: what takes the rest, e.g. "run the same command again".
    /// - Returns: the line, or nil for a run that finished.
    public static func line(stoppedBy: String?, interrupted: Bool, leftResumable: Int, resume: String) -> String? {
        // A stop is one line: its jobs stay queued, as `r2up queue` and a summary show.
        if let stoppedBy { return stoppedBy }
        guard interrupted else { return nil }
        let left = leftResumable == 1 ? "1 upload is" : "\(leftResumable) uploads are"
        return "interrupted; \(left) left to resume: \(resume)"
    }
}

/// The durable upload queue (seed 003): jobs live in the store, so a run that dies is
/// continued by the next one — a multipart upload resumes from its recorded parts.
///
/// Each job is driven by its `UploadJobMachine`: the queue feeds it what happened and does
/// what it answers; nothing else decides a job's state. Store writes go through a
/// `StoreWriter`, off the transfer thread.
package final class UploadQueue: Sendable {
    package let store: Store
    public let service: UploadService
    public let policy: JobRetryPolicy
    let writer: StoreWriter
    /// What each job's key must hold when it is written, as its enqueue found (`WriteCondition`);
    /// a job queued by an earlier run and not enqueued again in this one carries none.
    /// (A nil value is decided too: `--overwrite` sends no condition.)
    private let conditions = Mutex<[UUID: WriteCondition?]>([:])
    /// Jobs whose key holds another track's upload: an object there is never taken for theirs.
    private let keysHeldElsewhere = Mutex<Set<UUID>>([])

    /// Each request already retries a few times with backoff (`RequestRetryPolicy`); a job that
    /// still fails gets one more go in the run (a multipart upload resumes from its parts).
    public static let defaultPolicy = JobRetryPolicy(maxInProcessAttempts: 2)

    /// Files up to this size are uploaded by a task on the transfer thread (hashing 1 MiB takes
    /// well under a millisecond); bigger ones by tasks on the shared pool.
    static let transferThreadLimit: Int64 = 1 << 20

    /// Restarts of one job in a run (the machine allows one per NoSuchUpload streak): a bound.
    static let maxRestarts = 3

    package init(store: Store, service: UploadService, policy: JobRetryPolicy = UploadQueue.defaultPolicy) {
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

    /// Runs jobs, at most `concurrency` files at a time (parts share the same request slots).
    public func run(
        _ jobs: [UploadJob], attributes: RunAttributes = RunAttributes(), progress: TransferProgress? = nil,
        onEvent: @escaping @Sendable (QueueEvent) -> Void = { _ in }
    ) async -> QueueRunSummary {
        await run(jobs, attributes: attributes, progress: progress, admit: { _ in true }, onEvent: onEvent)
    }

    /// `run`, asking `admit` as each job is about to start; a job turned away stays queued
    /// (sync turns away a file that moved since its scan: it may still be being written).
    ///
    /// A failure of the whole run (`Failure.scope == .run`) stops it: no job starts after it,
    /// the jobs in flight are left resumable, and `stoppedBy` says why. Cancelling the calling
    /// task (Ctrl-C) does the same and sets `interrupted`.
    ///
    /// `produce`, when given, queues more jobs while the run goes (`JobFeed`): they run after
    /// `jobs`, as they come; a store failure it reports stops the run like any other.
    public func run(
        _ jobs: [UploadJob], feeding produce: (@Sendable (JobFeed) async -> Void)? = nil, attributes: RunAttributes,
        progress: TransferProgress? = nil, admit: @escaping @Sendable (UploadJob) -> Bool,
        onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async -> QueueRunSummary {
        let feed = JobFeed { added in
            progress?.expect(files: added.count, bytes: added.reduce(0) { $0 + $1.length })
            for job in added { onEvent(.queued(job)) }
        }
        let producer = produce.map { produce in
            Task {
                await produce(feed)
                feed.finish()
            }
        }
        if producer == nil { feed.finish() }
        var (summary, runnable) = await withTaskCancellationHandler {
            await runJobs(jobs, feed: feed, attributes: attributes, progress: progress, admit: admit, onEvent: onEvent)
        } onCancel: {
            // Ctrl-C: queue no more; a chunk being written ends with its transaction.
            feed.close()
            producer?.cancel()
        }
        // Whatever the producer queues after the run stopped keeps this run's lease until it is
        // released below: wait for it first.
        feed.close()
        await producer?.value
        // A store failure the producer met after the loop had ended is still the run's.
        if summary.stoppedBy == nil, let failure = feed.failure { summary.stoppedBy = Failure(failure, subject: nil) }
        let finished = summary.completed.count + summary.failed.count + summary.deferred.count
        summary.leftResumable = max(0, runnable + feed.count + feed.unqueuedCount - finished)
        // What is left is queued, not uploading: the lease goes with the run.
        try? await writer.perform { store throws(StoreError) in try store.releaseLeases() }
        return summary
    }

    private func runJobs(
        _ jobs: [UploadJob], feed: JobFeed, attributes: RunAttributes, progress: TransferProgress?,
        admit: @escaping @Sendable (UploadJob) -> Bool, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async -> (summary: QueueRunSummary, runnable: Int) {
        let summary = RunTally()
        // Jobs queued by this process carry its lease already; others (retry) are claimed now.
        var runnable = jobs.filter { $0.lease?.isMine == true }
        let unclaimed = jobs.filter { $0.lease?.isMine != true }.map(\.id)
        if !unclaimed.isEmpty {
            do {
                let claimed = try await writer.perform { store throws(StoreError) in try store.claim(unclaimed) }
                for (job, disposition) in claimed {
                    if case .heldBy(let pid) = disposition {
                        summary.value.withLock { $0.heldElsewhere.append((job, pid)) }
                    } else {
                        runnable.append(job)
                    }
                }
            } catch {
                summary.value.withLock { $0.stoppedBy = Failure(error, subject: nil) }
                return (summary.value.withLock { $0 }, 0)
            }
        }
        // Jobs this process did not enqueue (retry) are guarded as their store says.
        let unguarded = runnable.filter { job in !conditions.withLock { $0.keys.contains(job.id) } }
        if !unguarded.isEmpty,
            let found = try? await writer.perform({ store throws(StoreError) in try store.writeConditions(for: unguarded) })
        {
            conditions.withLock { decided in
                for (id, condition) in found.conditions where decided[id] == nil { decided[id] = .some(condition) }
            }
            keysHeldElsewhere.withLock { $0.formUnion(found.heldElsewhere) }
        }
        let jobs = runnable
        progress?.expect(files: jobs.count, bytes: jobs.reduce(0) { $0 + $1.length })
        for job in jobs { onEvent(.queued(job)) }
        let onEvent: @Sendable (QueueEvent) -> Void =
            if let progress {
                { event in
                    switch event {
                    case .queued: break
                    case .started(let job): progress.started(job)
                    case .completed(let job, _, _): progress.finished(job, succeeded: true)
                    case .failed(let job, _, _): progress.finished(job, succeeded: false)
                    }
                    onEvent(event)
                }
            } else { onEvent }
        // A failure of the whole run stops the queueing too, even while the loop waits for it.
        let control = RunControl { feed.close() }
        let live = LiveProgress()
        let recorder = BatchedJobRecorder(writer: writer)
        let flusher = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
                await recorder.flush()
            }
        }
        let keeper = Task.detached { [writer] in await Self.keepLeases(writer: writer, live: live) }
        // Small files' tasks run on the transfer thread itself (see `TransferEngine`), the run's own
        // task too, so finishing one file and starting the next crosses no thread; bigger files
        // hash on the shared pool instead, where they do not hold up every other transfer.
        await withTaskExecutorPreference(service.client.engine) {
            await withTaskGroup(of: Void.self) { group in
                var next = 0
                var running = 0
                /// The next job: the given ones first, then what the feed brings (waiting for it).
                func take() async -> UploadJob? {
                    guard !control.isStopped, !Task.isCancelled else { return nil }
                    if next < jobs.count {
                        next += 1
                        return jobs[next - 1]
                    }
                    guard let job = await feed.next() else {
                        // The queueing stopped on a store failure: so does the run.
                        if let failure = feed.failure { control.stop(Failure(failure, subject: nil)) }
                        return nil
                    }
                    return control.isStopped || Task.isCancelled ? nil : job
                }
                func add(_ job: UploadJob) {
                    let work: @Sendable () async -> Void = {
                        guard admit(job) else {
                            progress?.skipped(job)
                            summary.value.withLock { $0.deferred.append(job) }
                            return
                        }
                        let driver = JobDriver(
                            job: job, policy: self.policy, writer: self.writer, recorder: recorder, live: live,
                            display: progress, keyHeldElsewhere: self.keysHeldElsewhere.withLock { $0.contains(job.id) })
                        await self.process(
                            driver, attributes: attributes, control: control, summary: summary, onEvent: onEvent)
                    }
                    if job.length <= Self.transferThreadLimit {
                        group.addTask(operation: work)
                    } else {
                        group.addTask(executorPreference: globalConcurrentExecutor, operation: work)
                    }
                }
                let slots = service.uploader.slots
                while true {
                    // One job per request slot, read as the depth moves (a pinned 1 is one file at a time).
                    while running < slots.limit, let job = await take() {
                        add(job)
                        running += 1
                    }
                    guard running > 0 else { break }
                    _ = await group.next()
                    running -= 1
                    if control.isStopped { group.cancelAll() }
                }
            }
        }
        flusher.cancel()
        await flusher.value
        await recorder.flush()
        keeper.cancel()
        await keeper.value
        await writer.drain()
        // What this run sent, for `catalog publish` (a failure here only costs it HEADs).
        let sent = summary.sent
        try? await writer.perform { store throws(StoreError) in
            for (bucket, objects) in sent.take() { try store.updateCatalogObjects(bucket: bucket, saving: objects, removing: []) }
        }
        let tally = summary.value.withLock { tally in
            tally.stoppedBy = control.failure
            tally.interrupted = Task.isCancelled
            return tally
        }
        return (tally, jobs.count)
    }

    /// One job from start to end, as its machine says.
    private func process(
        _ driver: JobDriver, attributes: RunAttributes, control: RunControl, summary: RunTally,
        onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async {
        let threshold = service.uploader.settings.multipartThreshold
        // A single PUT has nothing to resume: its steps may wait for the next batched commit.
        // A copy (a moved track) is recorded step by step: it has no batched form.
        var batched = driver.job.uploadID == nil && driver.job.length <= threshold && !driver.job.isCopy
        var restarts = 0
        while true {
            let job = driver.job
            let multipart = !job.isCopy && (job.uploadID != nil || job.length > threshold)
            guard driver.start(multipart: multipart, batched: batched) else {
                summary.value.withLock { $0.deferred.append(job) }
                return
            }
            if !batched, await !save(driver, control: control) { return }
            onEvent(.started(driver.job))
            do {
                let publicURL = try service.publicObjectURL(for: job.key, in: job.bucket)  // before any byte is sent
                let file = try LocalFile(path: job.path)
                if file.size != job.length || file.modificationTimeNs != job.mtimeNs {
                    // Changed since it was queued, before this run sent anything: whatever an earlier
                    // run sent belongs to the old content. Start over with the file as it is now.
                    restarts += 1
                    if case .restage(let abandoned?) = driver.fileChanged() {
                        await abort(bucket: job.bucket, key: job.key, uploadID: abandoned)
                    }
                    driver.uploadInsteadOfCopy()
                    driver.refreshFile()
                    guard restarts <= Self.maxRestarts, await save(driver, control: control) else { return }
                    batched = false
                    continue
                }
                var objectAttributes = await attributes.attributes(for: job.path)
                objectAttributes.contentType = job.contentType
                let outcome: UploadOutcome
                if let sourceKey = job.copySourceKey {
                    // A moved track: the bytes are in the bucket already; none is sent again.
                    outcome = try await resumableUploader.copy(
                        from: CopySource(bucket: job.bucket, key: sourceKey), sourceETag: job.copySourceETag,
                        size: job.length, to: job.key, bucket: job.bucket, attributes: objectAttributes, journal: driver,
                        condition: writeCondition(for: driver))
                } else {
                    var checkpoint = driver.checkpoint
                    if checkpoint == nil, job.uploadID != nil {
                        let id = job.id
                        let parts = try await writer.perform { store throws(StoreError) in try store.parts(jobID: id) }
                        checkpoint = driver.checkpoint(from: parts)
                    }
                    outcome = try await resumableUploader.upload(
                        file, bucket: job.bucket, key: job.key, attributes: objectAttributes, checkpoint: checkpoint,
                        journal: driver, condition: writeCondition(for: driver))
                    // What the object holds, for the catalog; a copy holds its source's metadata, so it is HEADed there.
                    summary.sent.note(bucket: job.bucket, key: outcome.key, etag: outcome.etag, size: outcome.size, attributes: objectAttributes)
                }
                let item = UploadItem(
                    fileName: FilePath.name(job.path), fileSize: outcome.size, r2Key: outcome.key, uploadDate: Date(),
                    publicURL: publicURL, bucket: job.bucket, etag: outcome.etag, copiedFrom: job.copySourceKey)
                let completed = driver.verified(size: outcome.size, digest: outcome.digest)
                if batched {
                    driver.recorder.completed(completed, item: item) { committed in
                        switch committed {
                        case .success:
                            summary.value.withLock {
                                $0.completed.append(item)
                                $0.bytesSent += outcome.bytesSent
                            }
                            onEvent(.completed(completed, item, outcome))
                        case .failure(let error):
                            // Sent and verified, but not recorded: the run stops; the job stays queued
                            // and the next run sends it again (no history row lost or doubled).
                            control.stop(Failure(error, subject: nil))
                        }
                    }
                    return
                }
                let done = try await writer.perform { store throws(StoreError) in
                    try store.completeJob(id: completed.id, historyItem: item, digest: completed.digest)
                }
                summary.value.withLock {
                    $0.completed.append(item)
                    $0.bytesSent += outcome.bytesSent
                }
                onEvent(.completed(done, item, outcome))
                return
            } catch {
                if batched {
                    // The job's start lands before its failure.
                    await driver.recorder.flush()
                    batched = false
                }
                if job.isCopy, case .s3(.service(let missing))? = error as? UploadError,
                    missing.code == "NoSuchKey" || (missing.status == 404 && missing.code != "NoSuchBucket")
                {
                    // The moved track's old object is gone (deleted behind r2up's back): send the file.
                    restarts += 1
                    _ = driver.fileChanged()
                    driver.uploadInsteadOfCopy()
                    driver.refreshFile()
                    guard restarts <= Self.maxRestarts, await save(driver, control: control) else { return }
                    continue
                }
                if let upload = error as? UploadError, upload.fileIsGone {
                    // Nothing is left to send, ever: the job goes (with a track never uploaded), as
                    // sync settles a file deleted before its turn; the run says which file and why.
                    let diagnosis = await service.diagnose(error, subject: job.path).ofFileFound
                    let id = job.id
                    do {
                        let abandoned = try await writer.perform { store throws(StoreError) in try store.dropJobs([id]) }
                        for (key, uploadID) in abandoned { _ = await abort(bucket: job.bucket, key: key, uploadID: uploadID) }
                    } catch {
                        control.stop(Failure(error, subject: nil))
                        return
                    }
                    report(driver.job, diagnosis, next: nil, summary: summary, onEvent: onEvent)
                    return
                }
                let failure = Failure(error, diagnosis: await service.diagnose(error, subject: job.path))
                switch driver.failed(failure, now: Date(), stopping: control.isStopped || Task.isCancelled) {
                case .retry(let delay):
                    guard await save(driver, control: control, error: failure.diagnosis.message) else { return }
                    try? await Task.sleep(for: delay)
                    if Task.isCancelled || control.isStopped {
                        _ = driver.interrupt()
                        _ = await save(driver, control: control)
                        return
                    }
                case .restage(let abandoned):
                    if let abandoned { await abort(bucket: job.bucket, key: job.key, uploadID: abandoned) }
                    driver.refreshFile()
                    guard failure.kind != .fileChanged else {
                        // Not published torn; staged again, for a run that finds the file quiet.
                        driver.setAside()
                        guard await save(driver, control: control) else { return }
                        report(driver.job, failure.diagnosis, next: nil, summary: summary, onEvent: onEvent)
                        return
                    }
                    // The upload was gone (NoSuchUpload): start it over, once, in this run.
                    restarts += 1
                    guard restarts <= Self.maxRestarts, await save(driver, control: control) else { return }
                case .suspend:
                    // Interrupted, or the whole run is stopping: resumable, not failed.
                    if failure.scope == .run {
                        control.stop(failure)
                        // A multipart upload with no part recorded has nothing to resume: it goes
                        // (the next run's ListParts finds it gone and starts a new one).
                        if let uploadID = driver.job.uploadID, !driver.hasRecordedParts {
                            await abort(bucket: job.bucket, key: job.key, uploadID: uploadID)
                        }
                    }
                    _ = await save(driver, control: control)
                    return
                case .giveUp(let next):
                    guard await save(driver, control: control, error: failure.diagnosis.message) else { return }
                    report(driver.job, failure.diagnosis, next: next, summary: summary, onEvent: onEvent)
                    return
                case .failPermanently(let abandoned):
                    if let abandoned { await abort(bucket: job.bucket, key: job.key, uploadID: abandoned) }
                    guard await save(driver, control: control, error: failure.diagnosis.message) else { return }
                    report(driver.job, failure.diagnosis, next: nil, summary: summary, onEvent: onEvent)
                    return
                default:
                    // The machine refused the event: keep what the store has and report the failure.
                    report(driver.job, failure.diagnosis, next: nil, summary: summary, onEvent: onEvent)
                    return
                }
            }
        }
    }

    /// What the key must hold when this job writes it: as its enqueue found, unless a PUT of this
    /// run already stored the file there (a retry after the check failed): then that object.
    private func writeCondition(for driver: JobDriver) -> WriteCondition? {
        guard let found = conditions.withLock({ $0[driver.jobID] ?? nil }) else { return nil }
        return driver.sentETag.map(WriteCondition.etag) ?? found
    }

    private func report(
        _ job: UploadJob, _ diagnosis: Diagnosis, next: Date?, summary: RunTally,
        onEvent: @Sendable (QueueEvent) -> Void
    ) {
        summary.value.withLock { $0.failed.append((job, diagnosis)) }
        onEvent(.failed(job, diagnosis, nextAttemptAt: next))
    }

    /// Writes the job as its machine left it; a store that cannot take it stops the run.
    private func save(_ driver: JobDriver, control: RunControl, error: String? = nil) async -> Bool {
        let (job, track) = driver.snapshot
        do {
            try await writer.perform { store throws(StoreError) in try store.saveJob(job, trackState: track, trackError: error) }
            return true
        } catch {
            control.stop(Failure(error, subject: nil))
            return false
        }
    }

    /// Aborts a multipart upload r2up no longer needs; one that cannot be aborted now is
    /// recorded, and the next run tries again (`abortAbandonedUploads`).
    /// - Returns: whether the upload is gone from the server.
    @discardableResult
    func abort(bucket: String, key: String, uploadID: String) async -> Bool {
        do {
            try await service.client.abortMultipartUpload(bucket: bucket, key: key, uploadID: uploadID)
            return true
        } catch .service(let failure) where failure.code == "NoSuchUpload" || failure.status == 404 {
            return true
        } catch {
            let message = Diagnosis(error).message
            try? await writer.perform { store throws(StoreError) in
                try store.recordAbandoned(bucket: bucket, key: key, uploadID: uploadID, error: message)
            }
            return false
        }
    }

    /// Aborts the multipart uploads earlier runs gave up on but could not abort.
    /// - Returns: how many are still left on the server.
    @discardableResult
    public func abortAbandonedUploads() async -> Int {
        let bucket = service.bucket
        guard let left = try? await writer.perform({ store throws(StoreError) in try store.abandonedUploads(bucket: bucket) })
        else { return 0 }
        var remaining = 0
        for upload in left {
            guard await abort(bucket: upload.bucket, key: upload.key, uploadID: upload.uploadID) else {
                remaining += 1
                continue
            }
            try? await writer.perform { store throws(StoreError) in
                try store.forgetAbandoned(bucket: upload.bucket, key: upload.key, uploadID: upload.uploadID)
            }
        }
        return remaining
    }

    /// Aborts multipart uploads the server holds under keys r2up owns (a key of one of this
    /// store's tracks or jobs) that no unfinished job uses: a run killed between
    /// CreateMultipartUpload's answer and its record left them. One listing request.
    /// - Returns: how many were aborted.
    @discardableResult
    public func abortOrphanedUploads() async -> Int {
        let bucket = service.bucket
        guard let pending = try? await service.client.listMultipartUploads(bucket: bucket), !pending.isEmpty else { return 0 }
        let candidates = pending.map { (key: ObjectKey.nfc($0.key), raw: $0.key, uploadID: $0.uploadID) }
        guard
            let orphans = try? await writer.perform({ store throws(StoreError) in
                try store.orphanedUploads(bucket: bucket, among: candidates.map { ($0.key, $0.uploadID) })
            })
        else { return 0 }
        var aborted = 0
        for candidate in candidates where orphans.contains(candidate.uploadID) {
            await abort(bucket: bucket, key: candidate.raw, uploadID: candidate.uploadID)
            aborted += 1
        }
        return aborted
    }

    /// Uploads that keep their multipart upload on a failure: the job's machine decides.
    private var resumableUploader: FileUploader {
        var settings = service.uploader.settings
        settings.keepPartsOnFailure = true
        return FileUploader(
            client: service.client, settings: settings, slots: service.uploader.slots, retry: service.uploader.retry,
            profile: service.uploader.profile)
    }

    /// Renews this process's leases every `JobLease.heartbeatInterval` and writes the bytes
    /// sent of jobs in flight at most once a second, never from the transfer thread.
    static func keepLeases(writer: StoreWriter, live: LiveProgress) async {
        var beats = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if Task.isCancelled { return }
            beats += 1
            let progress = live.takeChanges()
            guard !progress.isEmpty || beats % 2 == 0 else { continue }
            try? await writer.perform { store throws(StoreError) in try store.heartbeat(progress: progress) }
        }
    }
}

/// Stops a run: the first failure of the whole run is kept to say why.
final class RunControl: Sendable {
    private let state = Mutex<Failure?>(nil)
    private let onStop: @Sendable () -> Void

    init(onStop: @escaping @Sendable () -> Void = {}) {
        self.onStop = onStop
    }

    func stop(_ failure: Failure) {
        let first = state.withLock { stored -> Bool in
            guard stored == nil else { return false }
            stored = failure
            return true
        }
        if first { onStop() }
    }
    var isStopped: Bool { state.withLock { $0 != nil } }
    var failure: Failure? { state.withLock { $0 } }
}

/// Bytes sent of each job in flight, written by the transfer thread, read by the lease keeper.
final class LiveProgress: Sendable {
    private let state = Mutex<[UUID: Int64]>([:])

    func set(_ id: UUID, bytes: Int64) { state.withLock { $0[id] = bytes } }

    /// What changed since the last call.
    func takeChanges() -> [UUID: Int64] {
        state.withLock { changes in
            defer { changes = [:] }
            return changes
        }
    }
}

/// The summary being built by concurrent jobs.
final class RunTally: Sendable {
    let value = Mutex(QueueRunSummary())
    let sent = SentObjects()
}
