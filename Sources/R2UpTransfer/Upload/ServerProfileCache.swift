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

    /// False once a part's reply lacked the CRC-32C its server's profile promised
    /// (`echoesPartCRC32C`): parts carry it in a header for the rest of the run.
    var partsEchoed: Bool { partEcho.withLock { $0 } }
    func partsNotEchoed() { partEcho.withLock { $0 = false } }
    private let partEcho = Mutex<Bool>(true)

    /// Whether a request naming the server is on its way (its reply not back yet).
    var isNaming: Bool {
        naming.withLock { state in
            if case .probing = state { return true }
            return false
        }
    }

    /// Returns once no request naming the server is on its way.
    func waitForName() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let wait = naming.withLock { state -> Bool in
                guard case .probing(let waiters) = state else { return false }
                state = .probing(waiters + [waiter])
                return true
            }
            if !wait { waiter.resume() }
        }
    }

    /// Until a reply names the server, whether it honours `If-None-Match: *` is unknown and each
    /// conditional write needs a HEAD first. So the first caller sends its request (`probe`)
    /// alone; the others wait for its reply and then ask again, and a first wave of files goes
    /// as conditional writes with no HEAD where the server honours them. Returns the probe's
    /// result for the caller that made it, nil for the others (and for all once `nameAhead`
    /// has asked: they wait for its reply).
    func nameServer<T: Sendable>(_ probe: () async -> T) async -> T? {
        guard takeTurn() else {
            await waitForName()
            return nil
        }
        let result = await probe()
        named()
        return result
    }

    /// `nameServer` started now, before any write needs it, with no one waiting on the caller:
    /// `probe` runs in a task of its own, and the writes that come meanwhile wait for it. False
    /// (nothing started) when a request has asked already.
    func nameAhead(_ probe: @escaping @Sendable () async -> Void) -> Bool {
        guard takeTurn() else { return false }
        Task {
            await probe()
            named()
        }
        return true
    }

    /// Whether the caller is the one to send the naming request (the state is then `probing`).
    private func takeTurn() -> Bool {
        naming.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .probing([])
            return true
        }
    }

    /// The naming request's reply came back (or it failed): whoever waits asks again.
    private func named() {
        let waiters = naming.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state = .named }
            if case .probing(let waiters) = state { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume() }
    }
}
