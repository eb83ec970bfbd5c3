import Synchronization

/// Signing keys already derived, by day, region and service.
///
/// A key takes four HMACs to derive and stays valid for a whole day, while a busy upload signs many requests a
/// second. Copies of a `Signer` share one cache; the credentials of a signer never change, so they need not be
/// part of the cache key.
final class SigningKeyCache: Sendable {
    struct Scope: Hashable, Sendable {
        let day: String
        let region: String
        let service: String
    }

    /// Few scopes are ever live at once (today, and yesterday just after midnight UTC).
    static let capacity = 4

    private let keys = Mutex<[Scope: [UInt8]]>([:])

    /// The cached key for `scope`, or `derive()`'s result, which is then remembered.
    func key(for scope: Scope, derive: () -> [UInt8]) -> [UInt8] {
        if let known = withKeys({ $0[scope] }) { return known }
        // Derive outside the lock: two threads racing on a new day compute the same key, which is harmless.
        let derived = derive()
        guard !derived.isEmpty else { return derived }  // an OpenSSL failure is not worth remembering
        withKeys { keys in
            if keys.count >= Self.capacity { keys.removeAll(keepingCapacity: true) }
            keys[scope] = derived
        }
        return derived
    }

    /// How many keys are held, for tests.
    var count: Int { withKeys { $0.count } }

    /// The keys under their lock, the hand-off told to ThreadSanitizer (`RaceDetector`).
    private func withKeys<T: Sendable>(_ body: (inout [Scope: [UInt8]]) -> T) -> T {
        keys.withLock { keys in RaceDetector.section(self) { body(&keys) } }
    }
}
