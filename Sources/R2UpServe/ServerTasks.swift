import Foundation
import Synchronization

/// The uploads and downloads the pages started, each in a task of its own: a stop cancels them
/// (a cancelled push leaves its jobs queued and resumable, as Ctrl-C does) and waits for them.
///
/// A task may end before `start` has recorded it: a page's action with nothing to do (every
/// file refused, a group with nothing left to upload) ends at once, on another thread. Its end
/// is then remembered and the task never recorded, so no ended task is ever waited for.
final class ServerTasks: Sendable {
    private struct State {
        var running: [UUID: Task<Void, Never>] = [:]
        /// Tasks that ended before `start` recorded them.
        var ended: Set<UUID> = []
        /// Cancelled by a stop: a task started after it is cancelled at once.
        var stopped = false
    }
    private let state = Mutex(State())

    /// Runs `work` in a task of its own until it ends or the server stops.
    func start(_ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        let task = Task { [weak self] in
            await work()
            self?.end(id)
        }
        let stopped = state.withLock { state -> Bool in
            if state.ended.remove(id) == nil { state.running[id] = task }
            return state.stopped
        }
        if stopped { task.cancel() }
    }

    private func end(_ id: UUID) {
        state.withLock { state in
            if state.running.removeValue(forKey: id) == nil { state.ended.insert(id) }
        }
    }

    /// How many tasks have not ended yet.
    var count: Int { state.withLock { $0.running.count } }

    /// Cancels every task, and each one started from now on.
    func cancelAll() {
        let tasks = state.withLock { state in
            state.stopped = true
            return Array(state.running.values)
        }
        for task in tasks { task.cancel() }
    }

    /// Waits for every task to end, for at most `limit`; whether they all did.
    @discardableResult
    func drain(limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while count > 0 {
            guard ContinuousClock.now < deadline else { return false }
            // Not `Task.sleep`: the stop that waits here may itself be cancelled, and must wait anyway.
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { continuation.resume() }
            }
        }
        return true
    }
}
