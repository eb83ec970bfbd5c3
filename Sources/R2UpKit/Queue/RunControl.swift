import Foundation
import Synchronization
import R2UpModel

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
}

/// What every job of a run shares: its object attributes, how to stop it, its tally, whom to tell.
struct RunContext: Sendable {
    let attributes: RunAttributes
    let control: RunControl
    let summary: RunTally
    let onEvent: @Sendable (QueueEvent) -> Void
}
