import COpenSSL

/// libcrypto's process-wide set-up.
public enum CryptoRuntime {
    /// Stops libcrypto from freeing its state in an `atexit` handler. A process that exits while
    /// another thread still signs or hashes (a command refused after its first request went out:
    /// `push --db FOLDER` with the server's naming HEAD under way) otherwise crashed in that
    /// thread on a freed lock (SIGSEGV, 2 runs in 30). The memory goes back with the process.
    /// Call it first thing in `main`, before curl or a hash initialises OpenSSL: the first
    /// initialisation decides. Returns whether libcrypto took the setting.
    @discardableResult
    public static func keepStateAtExit() -> Bool {
        r2_openssl_no_atexit() == 1
    }
}
