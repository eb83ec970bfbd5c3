import Synchronization

/// Holds a request's body until someone decides whether it may go (`HTTPRequest.heldBy`).
///
/// The request's connection opens and its headers go out at once; curl pauses at the first
/// byte of the body. Released, the body follows on that connection; refused, the transfer
/// ends with `TransferError.Kind.bodyWithheld` and the server has had headers and no body: an
/// S3 PUT whose body falls short of its Content-Length stores nothing. A run's first writes to
/// a server not yet named use it: their connections open while the reply that names the server
/// is on its way, instead of after it.
public final class BodyGate: Sendable {
    public enum State: Sendable, Equatable { case held, released, refused }

    private let current = Atomic<UInt8>(0)
    /// Wakes the engine loop, which resumes (or ends) the transfers held here.
    private let wake: @Sendable () -> Void

    public init(engine: TransferEngine) {
        wake = { [weak engine] in engine?.wakeLoop() }
    }

    public var state: State {
        switch current.load(ordering: .acquiring) {
        case 0: .held
        case 1: .released
        default: .refused
        }
    }

    /// The body may go.
    public func release() { decide(1) }
    /// The body must not go: the transfer fails with `bodyWithheld`.
    public func refuse() { decide(2) }

    /// The first decision stands.
    private func decide(_ value: UInt8) {
        guard current.compareExchange(expected: 0, desired: value, ordering: .acquiringAndReleasing).exchanged else { return }
        wake()
    }
}
