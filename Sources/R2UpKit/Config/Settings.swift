import Foundation
package import SigV4
package import R2UpModel
package import R2UpTransfer

/// Where a setting's value came from, for `config show` and error messages.
package enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// An option the program was given (`SettingOverrides`), named as `OptionWords` name it.
    case flag(OptionName)
    /// A `SettingVariable`, by the name its giver calls it (the CLI: the environment variable).
    case environment(String)
    case file(path: String, profile: String)
    case builtIn

    package var description: String {
        switch self {
        case .flag(let option): return "flag \(OptionWords.current.name(option, .name))"
        case .environment(let name): return "environment \(name)"
        case .file(let path, let profile): return "\(path) [\(profile)]"
        case .builtIn: return "default"
        }
    }

    package var isFlag: Bool {
        if case .flag = self { return true }
        return false
    }
}

/// A resolved value and its origin.
package struct Sourced<Value: Sendable & Equatable>: Sendable, Equatable {
    package var value: Value
    package var source: SettingSource
}

/// What the command line said; nil means "not given".
package struct SettingOverrides: Sendable, Equatable {
    package var endpoint: String?
    package var region: String?
    package var profile: String?
    package var bucket: String?
    package var publicURL: String?
    package var database: String?
    package var addressing: S3Endpoint.Addressing?
    package var caBundle: String?

    package init() {}
}

/// Every setting r2up needs, resolved flags first, then environment, then files (DESIGN §2).
package struct Settings: Sendable, Equatable {
    package var profile: Sourced<String>
    package var endpoint: Sourced<String>?
    package var region: Sourced<String>
    package var credentials: Sourced<Credentials>?
    package var bucket: Sourced<String>?
    package var publicURL: Sourced<String>?
    package var database: Sourced<String>
    package var addressing: Sourced<S3Endpoint.Addressing>
    package var caBundle: String?
    /// Where `caBundle` came from (for `config show`).
    package var caBundleSource: SettingSource? = nil
    /// Files read, and warnings found while reading them (for example a world-readable secret).
    package var filesRead: [String] = []
    package var warnings: [String] = []
    /// Variables set but not used because the profile option named a profile that has the setting.
    package var outrankedByProfile: [String] = []
    /// Other variables r2up was given that are set but were not used, each with why
    /// (empty, another variable or a flag came first, half of a key pair), for `config show`.
    package var ignoredEnvironment: [IgnoredVariable] = []

    /// The endpoint, or the configuration error a command needing one reports.
    package func requireEndpoint() throws(ConfigurationError) -> S3Endpoint {
        guard let endpoint else { throw .missingEndpoint }
        return try S3Endpoint(url: endpoint.value, addressing: addressing.value)
    }

    package func requireCredentials() throws(ConfigurationError) -> Credentials {
        guard let credentials else { throw .missingCredentials }
        return credentials.value
    }

    package func requireBucket() throws(ConfigurationError) -> String {
        guard let bucket, !bucket.value.isEmpty else { throw .missingBucket }
        if let rule = BucketName.problem(bucket.value) {
            throw .invalidValue(setting: "the bucket (\(bucket.source))", value: bucket.value, reason: rule)
        }
        return bucket.value
    }
}

/// A `SettingVariable` that was set but not used, and why.
package struct IgnoredVariable: Sendable, Equatable {
    package var name: String
    package var reason: String
}
