import Synchronization

/// When the requests stop, the server hands back what a burst of them left: the store's idle
/// read connections and their page caches, then the pages glibc keeps freed (`malloc_trim`). 200
/// concurrent page loads otherwise leave the idle server 10-15 MiB above where it started.
final class IdleRelease: Sendable {
    private struct State {
        var inFlight = 0
        var lastEnd = ContinuousClock.now
        /// A request ended since the last release.
        var pending = false
    }

    private let state = Mutex(State())

    func began() { state.withLock { $0.inFlight += 1 } }

    func ended() {
        state.withLock { state in
            state.inFlight -= 1
            state.lastEnd = .now
            state.pending = true
        }
    }

    /// Whether to release now: requests came since the last release, none is being answered,
    /// and the last ended over `quiet` ago (its body written by then). True once per burst.
    func due(quiet: Duration) -> Bool {
        state.withLock { state in
            guard state.pending, state.inFlight == 0, ContinuousClock.now - state.lastEnd >= quiet else { return false }
            state.pending = false
            return true
        }
    }
}
