import Foundation

/// ThreadSanitizer's happens-before annotations, found at run time: there only in a process
/// built with `-sanitize=thread`, nil (one load and a branch) otherwise.
///
/// Swift's `Mutex` on Linux hands a contended lock over in the kernel: a priority-inheritance
/// futex, locked and unlocked by `_lockSlow`/`_unlockSlow` in the uninstrumented
/// libswiftSynchronization, so TSan sees no release and acquire and reports what the lock
/// guards as a race ("Swift access race"; a 20-line program with one `Mutex<Int>` and two
/// threads reproduces it, docs/development/reliability.md). A lock contended in the tests (the
/// transfer engine's inbox, the signing-key cache) tells TSan about the hand-off itself. Here in
/// SigV4, the lowest module with such a lock, for the modules above it too.
package enum RaceDetector {
    package typealias Hook = @convention(c) (UnsafeRawPointer?) -> Void

    /// `__tsan_acquire(address)`: what was released on `address` happens before what follows.
    package static let acquire: Hook? = hook("__tsan_acquire")
    /// `__tsan_release(address)`: what came before happens before a later acquire of `address`.
    package static let release: Hook? = hook("__tsan_release")

    /// Runs `body`, a critical section of the lock `owner` holds (call it inside `withLock`),
    /// as a hand-off TSan can see: acquired on entry, released on the way out.
    package static func section<T>(_ owner: AnyObject, _ body: () -> T) -> T {
        let token = UnsafeRawPointer(Unmanaged.passUnretained(owner).toOpaque())
        acquire?(token)
        defer { release?(token) }
        return body()
    }

    private static func hook(_ name: String) -> Hook? {
        // A nil handle is RTLD_DEFAULT: every object loaded, the TSan runtime among them.
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: Hook.self)
    }
}
