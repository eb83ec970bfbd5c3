import Synchronization

/// Limits how many requests run at once across every file and part ("parts count").
///
/// A lock, not an actor: taking a free slot is then a plain call, with no hop to another
/// executor for each of a small-file push's thousands of requests.
public final class TransferSlots: Sendable {
    public let limit: Int
    private struct State {
        var inUse = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Waits for a free slot.
    public func acquire() async {
        let taken = state.withLock { state -> Bool in
            guard state.inUse < limit else { return false }
            state.inUse += 1
            return true
        }
        if taken { return }
        await withCheckedContinuation { continuation in
            // A slot may have been freed between the two locks: take it rather than wait.
            let resumeNow = state.withLock { state -> Bool in
                if state.inUse < limit {
                    state.inUse += 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Frees a slot, handing it straight to the longest waiter.
    public func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.inUse -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
