import Foundation
import Synchronization
package import R2UpStore

/// Jobs handed to a run that is already running: the rest of a folder, queued in later commits
/// while its first files upload (`UploadQueue.run(_:feeding:…)`). A folder of thousands then
/// starts sending after one small commit instead of after all of them, and the server is not
/// left idle while r2up writes its queue.
package final class JobFeed: Sendable {
    private struct State {
        var ready: [UploadJob] = []
        var head = 0
        var added = 0
        /// Files the producer had planned but did not queue once the run stopped taking jobs.
        var unqueued = 0
        var finished = false
        var closed = false
        var failure: StoreError?
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())
    private let onAdd: @Sendable ([UploadJob]) -> Void

    init(onAdd: @escaping @Sendable ([UploadJob]) -> Void = { _ in }) {
        self.onAdd = onAdd
    }

    /// Whether the run still takes jobs; a producer stops queueing once it is false.
    package var isOpen: Bool { state.withLock { !$0.closed && !$0.finished } }

    /// Queues `count` planned files a commit at a time (`chunks`): `commit` queues the files of a
    /// range and returns the jobs to run, which go to the run at once. Stops when the run takes
    /// no more (the rest are counted as not queued) or the store fails (the run stops with it).
    package func fill(
        count: Int, concurrency: Int, _ commit: (Range<Int>) async throws(StoreError) -> [UploadJob]
    ) async {
        for range in Self.chunks(count: count, concurrency: concurrency) {
            guard isOpen else {
                leftUnqueued(count - range.lowerBound)
                return
            }
            do {
                add(try await commit(range))
            } catch {
                leftUnqueued(count - range.lowerBound)
                fail(error)
                return
            }
        }
    }

    /// Hands queued jobs to the run (they carry this process's lease and their write conditions).
    private func add(_ jobs: [UploadJob]) {
        guard !jobs.isEmpty else { return }
        change { state in
            state.ready += jobs
            state.added += jobs.count
        }
        onAdd(jobs)
    }

    /// Queueing failed in the store: the run stops with this failure once it has taken what came before.
    func fail(_ error: StoreError) {
        change { state in
            if state.failure == nil { state.failure = error }
            state.finished = true
        }
    }

    /// The producer stops with `count` planned files not queued (the run stopped, or the store
    /// failed): they are counted among what the next run resumes.
    private func leftUnqueued(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.unqueued += count }
    }

    /// Nothing more will be added.
    func finish() { change { $0.finished = true } }

    /// The run takes no more jobs (it stopped, or was interrupted): a waiting `next` returns nil.
    func close() { change { $0.closed = true } }

    /// Changes the state and wakes a `next` that waits for it.
    private func change(_ body: (inout State) -> Void) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            body(&state)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// How many jobs were handed over in all.
    var count: Int { state.withLock { $0.added } }

    /// How many planned files were never queued.
    var unqueuedCount: Int { state.withLock { $0.unqueued } }

    /// The store failure that ended the queueing, if any.
    var failure: StoreError? { state.withLock { $0.failure } }

    /// The next job, waiting for the producer when none is ready; nil once it has finished and
    /// every job was taken, or the feed was closed. One reader at a time (the run's loop).
    func next() async -> UploadJob? {
        while true {
            enum Step { case job(UploadJob), end, wait }
            let step = state.withLock { state -> Step in
                if state.closed { return .end }
                if state.head < state.ready.count {
                    let job = state.ready[state.head]
                    state.head += 1
                    if state.head == state.ready.count {
                        state.ready.removeAll(keepingCapacity: true)
                        state.head = 0
                    }
                    return .job(job)
                }
                return state.finished ? .end : .wait
            }
            switch step {
            case .job(let job): return job
            case .end: return nil
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state -> Bool in
                            if state.closed || state.finished || state.head < state.ready.count { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    close()
                }
            }
        }
    }

    /// The sizes of the commits that queue `count` files for a run of `concurrency` at a time:
    /// a first one just big enough to keep every slot busy while the second is written, then
    /// bigger ones (fewer commits), up to 512.
    static func chunks(count: Int, concurrency: Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        var size = max(8, 4 * max(1, concurrency))
        while start < count {
            let end = min(count, start + size)
            ranges.append(start..<end)
            start = end
            size = min(512, size * 4)
        }
        return ranges
    }
}
