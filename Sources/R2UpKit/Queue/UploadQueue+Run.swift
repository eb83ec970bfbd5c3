import Foundation
import Synchronization
import R2UpModel
package import R2UpStore
import R2UpTransfer

/// A run of the queue: which jobs it takes, how many at a time, and what it leaves behind.
extension UploadQueue {
    /// `run`, asking `admit` as each job is about to start; a job turned away stays queued
    /// (sync turns away a file that moved since its scan: it may still be being written).
    ///
    /// A failure of the whole run (`Failure.scope == .run`) stops it: no job starts after it,
    /// the jobs in flight are left resumable, and `stoppedBy` says why. Cancelling the calling
    /// task (Ctrl-C) does the same and sets `interrupted`.
    ///
    /// `produce`, when given, queues more jobs while the run goes (`JobFeed`): they run after
    /// `jobs`, as they come; a store failure it reports stops the run like any other.
    package func run(
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
        _ given: [UploadJob], feed: JobFeed, attributes: RunAttributes, progress: TransferProgress?,
        admit: @escaping @Sendable (UploadJob) -> Bool, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async -> (summary: QueueRunSummary, runnable: Int) {
        let summary = RunTally()
        let jobs: [UploadJob]
        do {
            jobs = try await runnable(given, summary: summary)
        } catch {
            summary.value.withLock { $0.stoppedBy = Failure(error, subject: nil) }
            return (summary.value.withLock { $0 }, 0)
        }
        progress?.expect(files: jobs.count, bytes: jobs.reduce(0) { $0 + $1.length })
        for job in jobs { onEvent(.queued(job)) }
        let onEvent = Self.showing(progress, onEvent)
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
        let run = RunContext(attributes: attributes, control: control, summary: summary, onEvent: onEvent)
        await withTaskExecutorPreference(service.client.engine) {
            await drive(jobs, feed: feed, control: control) { job in
                // Made out of line: this closure's frame lives as long as the job's request.
                guard let driver = self.driver(for: job, admit: admit, recorder: recorder, live: live, progress: progress, in: run)
                else { return }
                await self.process(driver, in: run)
            }
        }
        flusher.cancel()
        await flusher.value
        await recorder.flush()
        keeper.cancel()
        await keeper.value
        await writer.drain()
        let tally = summary.value.withLock { tally in
            tally.stoppedBy = control.failure
            tally.interrupted = Task.isCancelled
            return tally
        }
        return (tally, jobs.count)
    }

    /// The job's driver, or nil when `admit` turns it away (it stays queued).
    @inline(never)
    private func driver(
        for job: UploadJob, admit: @Sendable (UploadJob) -> Bool, recorder: BatchedJobRecorder, live: LiveProgress,
        progress: TransferProgress?, in run: RunContext
    ) -> JobDriver? {
        guard admit(job) else {
            progress?.skipped(job)
            run.summary.value.withLock { $0.deferred.append(job) }
            return nil
        }
        return JobDriver(
            job: job, policy: policy, writer: writer, recorder: recorder, live: live, display: progress,
            keyHeldElsewhere: keysHeldElsewhere.withLock { $0.contains(job.id) })
    }

    /// The jobs this run may take: those it queued carry its lease already; others (retry)
    /// are claimed now, and those another live process holds are left to it. Jobs this process
    /// did not enqueue are guarded as their store says.
    private func runnable(_ jobs: [UploadJob], summary: RunTally) async throws(StoreError) -> [UploadJob] {
        var runnable = jobs.filter { $0.lease?.isMine == true }
        let unclaimed = jobs.filter { $0.lease?.isMine != true }.map(\.id)
        if !unclaimed.isEmpty {
            let claimed = try await writer.perform { store throws(StoreError) in try store.claim(unclaimed) }
            for (job, disposition) in claimed {
                if case .heldBy(let pid) = disposition {
                    summary.value.withLock { $0.heldElsewhere.append((job, pid)) }
                } else {
                    runnable.append(job)
                }
            }
        }
        let unguarded = runnable.filter { job in !conditions.withLock { $0.keys.contains(job.id) } }
        if !unguarded.isEmpty,
            let found = try? await writer.perform({ store throws(StoreError) in try store.writeConditions(for: unguarded) })
        {
            conditions.withLock { decided in
                for (id, condition) in found.conditions where decided[id] == nil { decided[id] = .some(condition) }
            }
            keysHeldElsewhere.withLock { $0.formUnion(found.heldElsewhere) }
        }
        return runnable
    }

    /// `onEvent`, telling `progress` first what started and finished.
    private static func showing(
        _ progress: TransferProgress?, _ onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) -> @Sendable (QueueEvent) -> Void {
        guard let progress else { return onEvent }
        return { event in
            switch event {
            case .queued: break
            case .started(let job): progress.started(job)
            case .completed(let job, _, _): progress.finished(job, succeeded: true)
            case .failed(let job, _, _): progress.finished(job, succeeded: false)
            }
            onEvent(event)
        }
    }

    /// Runs `work` for each job, the given ones first, then what the feed brings (waiting for
    /// it), one job per request slot as the depth moves (a pinned 1 is one file at a time).
    /// Small files' tasks run on the transfer thread itself (see `TransferEngine`), the run's
    /// own task too, so finishing one file and starting the next crosses no thread; bigger files
    /// hash on the shared pool instead, where they do not hold up every other transfer.
    private func drive(
        _ jobs: [UploadJob], feed: JobFeed, control: RunControl, work: @escaping @Sendable (UploadJob) async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            var running = 0
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
            let slots = service.uploader.slots
            var sized = false
            while true {
                while running < slots.limit, let job = await take() {
                    // The first file sizes the depth: unsized, 4 files ran alone until one ended.
                    if !sized {
                        sized = true
                        service.uploader.prepareDepth(forFileOfSize: job.length)
                    }
                    if job.length <= Self.transferThreadLimit {
                        group.addTask { await work(job) }
                    } else {
                        group.addTask(executorPreference: globalConcurrentExecutor) { await work(job) }
                    }
                    running += 1
                }
                guard running > 0 else { break }
                _ = await group.next()
                running -= 1
                if control.isStopped { group.cancelAll() }
            }
        }
    }

    /// Renews this process's leases every two seconds (`JobLease.staleAfter` is 10) and writes the bytes
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
