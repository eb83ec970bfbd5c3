import Foundation
package import SigV4
public import R2UpModel
package import R2UpTransfer

/// Where a setting's value came from, for `config show` and error messages.
public enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    case flag(String)
    case environment(String)
    case file(path: String, profile: String)
    case builtIn

    public var description: String {
        switch self {
        case .flag(let name): return "flag \(name)"
        case .environment(let name): return "environment \(name)"
        case .file(let path, let profile): return "\(path) [\(profile)]"
        case .builtIn: return "default"
        }
    }

    public var isFlag: Bool {
        if case .flag = self { return true }
        return false
    }
}

/// A resolved value and its origin.
public struct Sourced<Value: Sendable & Equatable>: Sendable, Equatable {
    public var value: Value
    public var source: SettingSource
}

/// What the command line said; nil means "not given".
public struct SettingOverrides: Sendable, Equatable {
    public var endpoint: String?
    public var region: String?
    public var profile: String?
    public var bucket: String?
    public var publicURL: String?
    public var database: String?
    package var addressing: S3Endpoint.Addressing?
    public var caBundle: String?

    public init() {}
}

/// Every setting r2up needs, resolved flags first, then environment, then files (DESIGN §2).
public struct Settings: Sendable, Equatable {
    public var profile: Sourced<String>
    public var endpoint: Sourced<String>?
    public var region: Sourced<String>
    package var credentials: Sourced<Credentials>?
    public var bucket: Sourced<String>?
    public var publicURL: Sourced<String>?
    public var database: Sourced<String>
    package var addressing: Sourced<S3Endpoint.Addressing>
    public var caBundle: String?
    /// Where `caBundle` came from (for `config show`).
    public var caBundleSource: SettingSource? = nil
    /// Files read, and warnings found while reading them (for example a world-readable secret).
    public var filesRead: [String] = []
    public var warnings: [String] = []
    /// Environment variables set but not used because `--profile` named a profile that has the setting.
    public var outrankedByProfile: [String] = []
    /// Other environment variables r2up reads that are set but were not used, each with why
    /// (empty, another variable or a flag came first, half of a key pair), for `config show`.
    public var ignoredEnvironment: [IgnoredVariable] = []

    /// The endpoint, or the configuration error a command needing one reports.
    package func requireEndpoint() throws(ConfigurationError) -> S3Endpoint {
        guard let endpoint else { throw .missingEndpoint }
        return try S3Endpoint(url: endpoint.value, addressing: addressing.value)
    }

    package func requireCredentials() throws(ConfigurationError) -> Credentials {
        guard let credentials else { throw .missingCredentials }
        return credentials.value
    }

    public func requireBucket() throws(ConfigurationError) -> String {
        guard let bucket, !bucket.value.isEmpty else { throw .missingBucket }
        if let rule = BucketName.problem(bucket.value) {
            throw .invalidValue(setting: "the bucket (\(bucket.source))", value: bucket.value, reason: rule)
        }
        return bucket.value
    }
}

/// An environment variable r2up reads that was set but not used, and why.
public struct IgnoredVariable: Sendable, Equatable {
    public var name: String
    public var reason: String
}
