package import R2UpModel

/// A program's exit code for each outcome, put in an encoder's `userInfo` under `key` so the
/// summaries it encodes carry the code the run ends with (`exitCode` in `sync --json`). The
/// codes are the program's own: the library only says the `FailureCategory`.
package struct ExitCodes: Sendable {
    /// The `userInfo` key an encoder holds `ExitCodes` under.
    package static let key: CodingUserInfoKey = {
        guard let key = CodingUserInfoKey(rawValue: "r2up.exitCodes") else { preconditionFailure("a constant key") }
        return key
    }()

    /// The exit code of an outcome.
    package var code: @Sendable (FailureCategory) -> Int32

    /// - Parameter code: the exit code of an outcome.
    package init(code: @escaping @Sendable (FailureCategory) -> Int32) {
        self.code = code
    }
}
