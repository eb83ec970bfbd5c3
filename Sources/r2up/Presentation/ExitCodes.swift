import R2UpKit

// The one place an outcome becomes a process exit code (docs/reference/exit-codes.md).
extension FailureCategory {
    /// DESIGN §3's exit code. An interruption by SIGTERM exits 143 instead (`Interruption`).
    var exitCode: Int32 {
        switch self {
        case .success: 0
        case .uploadFailed: 1
        case .badInput: 2
        case .configuration: 3
        case .locked: 4
        case .storeFailure: 5
        case .interrupted: 130
        }
    }
}

extension ExitCodes {
    /// The CLI's codes, for the summaries `--json` prints.
    static let cli = ExitCodes { $0.exitCode }
}
