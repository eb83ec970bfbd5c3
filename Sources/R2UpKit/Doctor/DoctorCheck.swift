import Foundation
package import R2UpModel

/// The result of one `r2up doctor` check, as one line for people.
package struct DoctorCheck: Sendable, Equatable {
    /// The checks, in the order doctor runs them.
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        case config, credentials, endpoint, tls = "TLS", bucket, write, publicURL = "public URL", clock, clipboard, database

        /// What a failure of this check means for the run's outcome (DESIGN §3).
        var failureCategory: FailureCategory {
            switch self {
            case .database: .storeFailure
            case .clipboard: .success
            default: .configuration
            }
        }
    }

    package enum Outcome: String, Sendable, Equatable {
        /// It works.
        case pass
        /// It works, but something deserves attention; the outcome stays a success.
        case warning
        /// It does not work.
        case fail
        /// Not run: a check it needs failed, or it does not apply (TLS on plain HTTP).
        case skipped
    }

    package var kind: Kind
    package var outcome: Outcome
    /// What was found (pass, warning, skipped) or what is wrong (fail). Never holds a secret.
    package var detail: String
    /// What to do about a failure or warning.
    package var advice: String?

    package init(_ kind: Kind, _ outcome: Outcome, _ detail: String, advice: String? = nil) {
        self.kind = kind
        self.outcome = outcome
        self.detail = detail
        self.advice = advice
    }

    static func pass(_ kind: Kind, _ detail: String) -> DoctorCheck { DoctorCheck(kind, .pass, detail) }
    static func fail(_ kind: Kind, _ detail: String, _ advice: String?) -> DoctorCheck {
        DoctorCheck(kind, .fail, detail, advice: advice)
    }
    static func warning(_ kind: Kind, _ detail: String, _ advice: String?) -> DoctorCheck {
        DoctorCheck(kind, .warning, detail, advice: advice)
    }
    static func skipped(_ kind: Kind, because failed: Kind) -> DoctorCheck {
        DoctorCheck(kind, .skipped, "skipped (the \(failed.rawValue) check did not pass)")
    }

}

/// Every check doctor ran, and the outcome they add up to.
package struct DoctorReport: Sendable, Equatable {
    package var checks: [DoctorCheck]

    package init(checks: [DoctorCheck]) { self.checks = checks }

    /// Success when nothing failed (warnings allowed); configuration when a configuration,
    /// credential, endpoint, bucket or write check failed; else a store failure when the
    /// database check failed.
    package var category: FailureCategory {
        let failed = checks.filter { $0.outcome == .fail }.map(\.kind.failureCategory)
        if failed.contains(.configuration) { return .configuration }
        if failed.contains(.storeFailure) { return .storeFailure }
        return .success
    }

    /// `8 passed, 1 warning, 0 failed`, plus the skipped ones when there are any.
    package var summary: String {
        func count(_ outcome: DoctorCheck.Outcome) -> Int { checks.filter { $0.outcome == outcome }.count }
        let warnings = count(.warning)
        var text = "\(count(.pass)) passed, \(warnings) warning\(warnings == 1 ? "" : "s"), \(count(.fail)) failed"
        let skipped = checks.filter { $0.outcome == .skipped && $0.detail.hasPrefix("skipped") }.count
        if skipped > 0 { text += ", \(skipped) skipped" }
        return text
    }
}
