/// Problems with settings, found before any upload starts (the `configuration` category).
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an http(s) URL; `source` names where it was set (`environment R2UP_ENDPOINT`).
    case invalidEndpoint(String, source: String? = nil)
    case missingEndpoint
    case missingCredentials
    case missingBucket
    case unknownProfile(String)
    case invalidFile(path: String, line: Int, reason: String)
    case invalidValue(setting: String, value: String, reason: String)
    /// A secret that cannot be used; its value is never printed.
    case invalidSecret(setting: String, reason: String)

    public var description: String {
        switch self {
        case .invalidEndpoint(let text, let source):
            return "the endpoint '\(text)'\(source.map { " (\($0))" } ?? "") is not an http(s) URL (scheme and host, no spaces, query or fragment); give one like https://ACCOUNT_ID.r2.cloudflarestorage.com"
        case .missingEndpoint:
            return "no endpoint is set; use \(OptionName.endpoint.everySource)"
        case .missingCredentials:
            return "no credentials found; set \(OptionName.accessKeyID.variable) and \(OptionName.secretAccessKey.variable) or a profile in ~/.aws/credentials"
        case .missingBucket:
            return "no bucket is set; use \(OptionName.bucket.sources)"
        case .unknownProfile(let name):
            return "the profile '\(name)' is not in ~/.aws/config, ~/.aws/credentials or the r2up config"
        case .invalidFile(let path, let line, let reason):
            return "\(path) line \(line): \(reason)"
        case .invalidValue(let setting, let value, let reason):
            return "\(setting) '\(value)' is not valid: \(reason)"
        case .invalidSecret(let setting, let reason):
            return "\(setting) is not valid: \(reason)"
        }
    }
}
