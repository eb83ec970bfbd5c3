import Foundation
import Synchronization

/// What happened to one job in a run, in the order things happen.
public enum QueueEvent: Sendable {
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
}

/// The durable upload queue (seed 003): jobs live in the store, so a run that dies is
/// continued by the next one — a multipart upload resumes from its recorded parts.
public final class UploadQueue: Sendable {
    public let store: Store
    public let service: UploadService
    public let policy: JobRetryPolicy

    /// Files up to this size are uploaded by a task on the transfer thread (hashing 1 MiB takes
    /// well under a millisecond); bigger ones by tasks on the shared pool.
    static let transferThreadLimit: Int64 = 1 << 20

    public init(store: Store, service: UploadService, policy: JobRetryPolicy = JobRetryPolicy()) {
        self.store = store
        self.service = service
        self.policy = policy
    }

    /// Checks the file and queues it. Bad input (missing file, FIFO, bad key) throws before
    /// anything is written; a job already queued for the same file is reused.
    public func enqueue(_ request: PushRequest) async throws -> UploadJob {
        try await enqueue([request])[0].get()
    }

    /// Checks and queues many files with one store commit. Each result is the job, or why that
    /// file was refused (nothing written for it); a store failure throws and queues nothing.
    public func enqueue(_ requests: [PushRequest]) async throws(StoreError) -> [Result<UploadJob, any Error>] {
        var results: [Result<UploadJob, any Error>] = []
        var accepted: [(index: Int, job: UploadJob)] = []
        let created = Date()
        for request in requests {
            do {
                let file = try LocalFile(path: FilePath.absolute(request.path))
                let key = try ObjectKey.validated(request.key)
                let job = UploadJob(
                    path: file.path, bucket: service.bucket, key: key,
                    contentType: request.attributes.contentType ?? ContentType.forFile(named: file.path),
                    length: file.size, mtimeNs: file.modificationTimeNs, createdAt: created)
                accepted.append((results.count, job))
                results.append(.success(job))
            } catch {
                results.append(.failure(error))
            }
        }
        guard !accepted.isEmpty else { return results }
        let stored = try store.enqueue(accepted.map(\.job))
        for (entry, outcome) in zip(accepted, stored) {
            results[entry.index] = .success(outcome.job)
            if let abandoned = outcome.abandonedUploadID {
                try? await service.client.abortMultipartUpload(
                    bucket: outcome.job.bucket, key: outcome.job.key, uploadID: abandoned)
            }
        }
        return results
    }

    /// Runs jobs, at most `concurrency` files at a time (parts share the same request slots).
    public func run(
        _ jobs: [UploadJob], attributes: ObjectAttributes = ObjectAttributes(), progress: TransferProgress? = nil,
        onEvent: @escaping @Sendable (QueueEvent) -> Void = { _ in }
    ) async -> QueueRunSummary {
        await run(jobs, attributes: attributes, progress: progress, admit: { _ in true }, onEvent: onEvent)
    }

    /// `run`, asking `admit` as each job is about to start; a job turned away stays queued
    /// (sync turns away a file that moved since its scan: it may still be being written).
    public func run(
        _ jobs: [UploadJob], attributes: ObjectAttributes, progress: TransferProgress? = nil,
        admit: @escaping @Sendable (UploadJob) -> Bool, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async -> QueueRunSummary {
        progress?.expect(files: jobs.count, bytes: jobs.reduce(0) { $0 + $1.length })
        let onEvent: @Sendable (QueueEvent) -> Void =
            if let progress {
                { event in
                    switch event {
                    case .started(let job): progress.started(job)
                    case .completed(let job, _, _): progress.finished(job, succeeded: true)
                    case .failed(let job, _, _): progress.finished(job, succeeded: false)
                    }
                    onEvent(event)
                }
            } else { onEvent }
        let summary = RunTally()
        let recorder = BatchedJobRecorder(store: store)
        let flusher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
                recorder.flush()
            }
        }
        // Small files' tasks run on the transfer thread itself (see `TransferEngine`), the run's own
        // task too, so finishing one file and starting the next crosses no thread; bigger files
        // hash on the shared pool instead, where they do not hold up every other transfer.
        await withTaskExecutorPreference(service.client.engine) {
            await withTaskGroup(of: Void.self) { group in
                var next = 0
                func addNext() {
                    guard next < jobs.count else { return }
                    let job = jobs[next]
                    next += 1
                    let work: @Sendable () async -> Void = {
                        guard admit(job) else {
                            progress?.skipped(job)
                            summary.value.withLock { $0.deferred.append(job) }
                            return
                        }
                        await self.process(
                            job, attributes: attributes, recorder: recorder, summary: summary, progress: progress,
                            onEvent: onEvent)
                    }
                    if job.length <= Self.transferThreadLimit {
                        group.addTask(operation: work)
                    } else {
                        group.addTask(executorPreference: globalConcurrentExecutor, operation: work)
                    }
                }
                for _ in 0..<max(1, service.options.concurrency) { addNext() }
                while await group.next() != nil { addNext() }
            }
        }
        flusher.cancel()
        await flusher.value
        recorder.flush()
        return summary.value.withLock { $0 }
    }

    private func process(
        _ queued: UploadJob, attributes: ObjectAttributes, recorder: BatchedJobRecorder, summary: RunTally,
        progress: TransferProgress?, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async {
        var job = queued
        // A single PUT has nothing to resume: its steps may wait for the next batched commit.
        var batched = job.uploadID == nil && job.length <= service.uploader.settings.multipartThreshold
        do {
            if batched {
                recorder.started(job.id)
                job.state = .uploading
                job.attempts += 1
                job.lastError = nil
            } else {
                recorder.flush()
                job = try store.startJob(id: job.id)
            }
            onEvent(.started(job))
            let publicURL = try service.publicObjectURL(for: job.key, in: job.bucket)  // before any byte is sent
            let file = try LocalFile(path: job.path)
            if file.size != job.length || file.modificationTimeNs != job.mtimeNs {
                // Changed since it was queued: whatever was sent belongs to the old content.
                recorder.flush()
                batched = false
                if let abandoned = try store.resetJob(id: job.id, length: file.size, mtimeNs: file.modificationTimeNs) {
                    try? await service.client.abortMultipartUpload(bucket: job.bucket, key: job.key, uploadID: abandoned)
                }
                job = try store.updateJob(id: job.id) { $0.state = .uploading }
            }
            var checkpoint: MultipartCheckpoint?
            if let uploadID = job.uploadID, let partSize = job.partSize {
                let parts = try store.parts(jobID: job.id).map {
                    UploadedPart(
                        partNumber: $0.partNumber, etag: $0.etag, size: $0.size,
                        checksum: $0.checksum.flatMap(PayloadChecksum.init(recorded:)))
                }
                checkpoint = MultipartCheckpoint(uploadID: uploadID, partSize: partSize, parts: parts)
            }
            var objectAttributes = attributes
            objectAttributes.contentType = job.contentType
            let outcome = try await resumableUploader.upload(
                file, bucket: job.bucket, key: job.key, attributes: objectAttributes, checkpoint: checkpoint,
                journal: StoreJournal(store: store, jobID: job.id, before: recorder, progress: progress))
            let item = UploadItem(
                fileName: FilePath.name(job.path), fileSize: outcome.size, r2Key: outcome.key,
                uploadDate: Date(), publicURL: publicURL,
                bucket: job.bucket, etag: outcome.etag)
            if batched {
                job.state = .completed
                job.bytesSent = job.length
                let completed = job
                recorder.completed(completed, item: item) { committed in
                    switch committed {
                    case .success:
                        summary.value.withLock {
                            $0.completed.append(item)
                            $0.bytesSent += outcome.bytesSent
                        }
                        onEvent(.completed(completed, item, outcome))
                    case .failure(let error):
                        // Sent and verified, but not recorded: the job stays queued for the next run.
                        let diagnosis = Diagnosis(error, subject: completed.path)
                        let next = self.recordFailure(error, diagnosis: diagnosis, job: queued)
                        summary.value.withLock { $0.failed.append((queued, diagnosis)) }
                        onEvent(.failed(queued, diagnosis, nextAttemptAt: next))
                    }
                }
                return
            }
            job = try store.completeJob(id: job.id, historyItem: item)
            summary.value.withLock {
                $0.completed.append(item)
                $0.bytesSent += outcome.bytesSent
            }
            onEvent(.completed(job, item, outcome))
        } catch {
            recorder.flush()  // the job's start first, then its failure
            let diagnosis = await service.diagnose(error, subject: job.path)
            let next = recordFailure(error, diagnosis: diagnosis, job: job)
            summary.value.withLock { $0.failed.append((job, diagnosis)) }
            onEvent(.failed(job, diagnosis, nextAttemptAt: next))
        }
    }

    /// Uploads that keep their parts on a retryable failure, so the next run resumes them.
    private var resumableUploader: FileUploader {
        var settings = service.uploader.settings
        settings.keepPartsOnFailure = true
        return FileUploader(client: service.client, settings: settings, slots: service.uploader.slots, retry: service.uploader.retry)
    }

    /// Writes the failure to the job and the track; returns when the job is due again, if ever.
    private func recordFailure(_ error: any Error, diagnosis: Diagnosis, job: UploadJob) -> Date? {
        let kind: FailureKind =
            switch error {
            case let error as UploadError: error.failureKind
            case is StoreError: .other("store")
            default: .other(String(describing: error))
            }
        if kind == .fileChanged {
            _ = try? store.resetJob(id: job.id)
        }
        // In-process retries already happened request by request: what is left waits for a later run.
        let decision = policy.decide(
            kind, streak: 1, attempts: job.attempts, attemptsThisRun: policy.maxInProcessAttempts,
            duringUploadPart: false, now: Date())
        var nextAttempt: Date?
        _ = try? store.updateJob(id: job.id) { row in
            switch decision {
            case .giveUp(let at):
                row.state = kind == .fileChanged ? .staged : .failedRetryable
                row.nextAttemptAt = at
                nextAttempt = at
            case .retry:
                row.state = .failedRetryable
                row.nextAttemptAt = Date()
                nextAttempt = row.nextAttemptAt
            case .permanent:
                row.state = .failedPermanent
                row.nextAttemptAt = nil
            }
            row.lastError = diagnosis.message
        }
        _ = try? store.setUploadState(path: job.path, state: .error, error: diagnosis.message)
        return nextAttempt
    }
}

/// Records each durable step of an upload in the store as it happens.
final class StoreJournal: UploadJournal {
    let store: Store
    let jobID: UUID
    /// When bytes sent were last written; starts at creation, so a job done within a second
    /// (most small files) never spends a commit on progress nobody could have seen.
    private let lastProgress = Mutex<UInt64>(DispatchTime.now().uptimeNanoseconds)

    /// Batched steps to commit before this journal's own writes (a start before its parts).
    private let recorder: BatchedJobRecorder?

    /// Live counts for a progress display, if one is drawn.
    private let liveProgress: TransferProgress?

    init(store: Store, jobID: UUID, before recorder: BatchedJobRecorder? = nil, progress: TransferProgress? = nil) {
        self.store = store
        self.jobID = jobID
        self.recorder = recorder
        self.liveProgress = progress
    }

    func multipartStarted(uploadID: String, partSize: Int64) throws {
        recorder?.flush()
        _ = try store.updateJob(id: jobID) { row in
            row.uploadID = uploadID
            row.partSize = partSize
        }
    }

    func partFinished(_ part: UploadedPart, checksum: PayloadChecksum) throws {
        try store.recordPart(jobID: jobID, partNumber: part.partNumber, size: part.size, etag: part.etag, checksum: checksum.recorded)
    }

    func progress(bytesSent: Int64) {
        liveProgress?.sent(jobID, bytes: bytesSent)
        // At most once a second: `r2up queue` in another terminal reads it.
        let now = DispatchTime.now().uptimeNanoseconds
        let due = lastProgress.withLock { last in
            guard now &- last >= 1_000_000_000 else { return false }
            last = now
            return true
        }
        if due { try? store.setProgress(jobID: jobID, bytesSent: bytesSent) }
    }
}

/// The summary being built by concurrent jobs.
final class RunTally: Sendable {
    let value = Mutex(QueueRunSummary())
}
