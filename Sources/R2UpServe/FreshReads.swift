import Dispatch
import R2UpKit
import Synchronization

/// One read of the library shared by every request that waits for it: each caller gets a read
/// that started after it asked; callers that ask while a read runs share the next one. 200
/// callers at once cost one or two reads, not 200, and a read runs on a queue of its own, so the
/// threads that answer requests stay free.
final class FreshReads<Value: Sendable>: Sendable {
    private struct State {
        /// Callers so far; a read covers every caller numbered up to the count when it started.
        var asked = 0
        var reading = false
        var waiting: [(ticket: Int, continuation: CheckedContinuation<Result<Value, R2UpFailure>, Never>)] = []
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue
    private let read: @Sendable () throws(R2UpFailure) -> Value

    /// `queue`: a serial queue the reads run on (other work on it waits its turn).
    init(queue: DispatchQueue, read: @escaping @Sendable () throws(R2UpFailure) -> Value) {
        self.queue = queue
        self.read = read
    }

    /// The value as a read that started after this call finds it.
    func value() async throws(R2UpFailure) -> Value {
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
            let covered = state.withLock { $0.asked }
            let result: Result<Value, R2UpFailure>
            do throws(R2UpFailure) { result = .success(try read()) } catch { result = .failure(error) }
            let (answered, again) = state.withLock { state in
                let answered = state.waiting.filter { $0.ticket <= covered }
                state.waiting.removeAll { $0.ticket <= covered }
                if state.waiting.isEmpty { state.reading = false }
                return (answered, state.reading)
            }
            for caller in answered { caller.continuation.resume(returning: result) }
            guard again else {
                // A read of every track leaves tens of MiB freed: hand them back.
                ProcessMemory.releaseFreed()
                return
            }
        }
    }
}
