import Dispatch
import R2UpKit
import Synchronization

/// One read of the library shared by every request that waits for it: each caller gets a read
/// that started after it asked, or, when it allows, the last read while no commit came since it
/// started and it is recent; callers that ask while a read runs share the next one. 200 page
/// loads at once cost one or two reads, not 200, and a read runs on its own queue, so the
/// threads that answer requests stay free.
final class FreshReads<Value: Sendable>: Sendable {
    private struct State {
        /// Callers so far; a read covers every caller numbered up to the count when it started.
        var asked = 0
        var reading = false
        var waiting: [(ticket: Int, continuation: CheckedContinuation<Result<Value, R2UpFailure>, Never>)] = []
        /// Commits seen by the store's watcher (``storeChanged()``).
        var commits = 0
        /// The last read, the commits seen when it started, when it ended.
        var last: (value: Value, commits: Int, ended: ContinuousClock.Instant)?
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue
    private let read: @Sendable () throws(R2UpFailure) -> Value
    /// How long the last read is kept for ``value(recent:)``: then its memory goes back.
    private let keep: Duration

    /// `queue`: a serial queue the reads run on (other work on it waits its turn).
    init(queue: DispatchQueue, keep: Duration, read: @escaping @Sendable () throws(R2UpFailure) -> Value) {
        self.queue = queue
        self.keep = keep
        self.read = read
    }

    /// The store changed: the last read no longer stands for it.
    func storeChanged() {
        state.withLock { state in
            state.commits += 1
            state.last = nil
        }
    }

    /// The value as a read that started after this call finds it; with `recent`, the last read
    /// instead while no commit came since it started and it ended within `recent`.
    func value(recent: Duration? = nil) async throws(R2UpFailure) -> Value {
        if let recent {
            let now = ContinuousClock.now
            let kept = state.withLock { state in
                state.last.flatMap { $0.commits == state.commits && now - $0.ended < recent ? $0.value : nil }
            }
            if let kept { return kept }
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, R2UpFailure>, Never>) in
            let start = state.withLock { state in
                state.asked += 1
                state.waiting.append((state.asked, continuation))
                guard !state.reading else { return false }
                state.reading = true
                return true
            }
            if start { queue.async { self.loop() } }
        }
        return try result.get()
    }

    /// Reads until no caller waits: each read answers the callers that came before it started.
    private func loop() {
        while true {
            let (covered, commits) = state.withLock { ($0.asked, $0.commits) }
            let result: Result<Value, R2UpFailure>
            do throws(R2UpFailure) { result = .success(try read()) } catch { result = .failure(error) }
            let ended = ContinuousClock.now
            let (answered, again) = state.withLock { state in
                if case .success(let value) = result, state.commits == commits { state.last = (value, commits, ended) }
                let answered = state.waiting.filter { $0.ticket <= covered }
                state.waiting.removeAll { $0.ticket <= covered }
                if state.waiting.isEmpty { state.reading = false }
                return (answered, state.reading)
            }
            for caller in answered { caller.continuation.resume(returning: result) }
            guard again else {
                forget(endedAt: ended)
                return
            }
        }
    }

    /// Drops the last read once it is `keep` old, unless a newer one replaced it.
    private func forget(endedAt ended: ContinuousClock.Instant) {
        let (seconds, attoseconds) = keep.components
        let delay = DispatchTimeInterval.milliseconds(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.state.withLock { state in
                if state.last?.ended == ended { state.last = nil }
            }
            Routes.releaseFreedMemory()
        }
    }
}
