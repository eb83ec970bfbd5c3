import Synchronization
import R2UpModel

/// The server profile learnt from a reply, shared by the uploads of a run.
public final class ServerProfileCache: Sendable {
    private let state = Mutex<ServerProfile?>(nil)
    /// The first wave's wait for a reply that names the server (`nameServer`).
    private let naming = Mutex<Naming>(.idle)

    private enum Naming {
        case idle
        case probing([CheckedContinuation<Void, Never>])
        case named
    }

    public init() {}

    var value: ServerProfile? { state.withLock { $0 } }
    func learn(_ profile: ServerProfile) { state.withLock { $0 = profile } }

    /// Until a reply names the server, whether it honours `If-None-Match: *` is unknown and each
    /// conditional write needs a HEAD first. So the first caller sends its request (`probe`)
    /// alone; the others wait for its reply and then ask again, and a first wave of files goes
    /// as conditional writes with no HEAD where the server honours them. Returns the probe's
    /// result for the caller that made it, nil for the others.
    func nameServer<T: Sendable>(_ probe: () async -> T) async -> T? {
        let first = naming.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .probing([])
            return true
        }
        guard first else {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let wait = naming.withLock { state -> Bool in
                    guard case .probing(let waiters) = state else { return false }
                    state = .probing(waiters + [waiter])
                    return true
                }
                if !wait { waiter.resume() }
            }
            return nil
        }
        let result = await probe()
        let waiters = naming.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state = .named }
            if case .probing(let waiters) = state { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume() }
        return result
    }
}
