import Foundation

/// Runs store writes on a thread of their own, so no SQLite statement ever runs on the
/// transfer thread or holds a thread of the cooperative pool: a database that another
/// process keeps busy delays the record of a step, never the bytes on the wire.
///
/// Writes run one at a time, in the order they were submitted.
public final class StoreWriter: Sendable {
    public let store: Store
    private let queue: DispatchQueue

    public init(store: Store) {
        self.store = store
        queue = DispatchQueue(label: "r2up.store-writer", qos: .utility)
    }

    /// Runs `body` on the writer's thread and waits (suspended, not blocking) for its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (Store) throws(StoreError) -> T) async throws(StoreError) -> T {
        let store = store
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> T in try body(store) })
            }
        }
        return try result.get()
    }

    /// Queues `body` without waiting; `drain()` waits for it.
    public func submit(_ body: @escaping @Sendable (Store) -> Void) {
        let store = store
        queue.async { body(store) }
    }

    /// Waits until every write submitted so far has run.
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
