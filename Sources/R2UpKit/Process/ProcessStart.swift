import SigV4

/// What the `r2up` process sets up first thing in `main`, before any thread allocates or any
/// library initialises OpenSSL.
package enum ProcessStart {
    /// Two malloc arenas with fixed thresholds (`ProcessMemory.limitArenas`), and libcrypto's
    /// state kept at exit (`CryptoRuntime.keepStateAtExit`): a command that stops on an error
    /// while a request is under way exits without another thread meeting freed OpenSSL state.
    package static func prepare() {
        CryptoRuntime.keepStateAtExit()
        ProcessMemory.limitArenas()
    }
}
