import Synchronization
import R2UpModel

/// The server profile learnt from a reply, shared by the uploads of a run.
public final class ServerProfileCache: Sendable {
    private let state = Mutex<ServerProfile?>(nil)

    public init() {}

    var value: ServerProfile? { state.withLock { $0 } }
    func learn(_ profile: ServerProfile) { state.withLock { $0 = profile } }
}
