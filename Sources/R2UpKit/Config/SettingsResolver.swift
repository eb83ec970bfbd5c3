public import Foundation
import SigV4
public import R2UpModel
import R2UpTransfer

/// Resolves `Settings` from flags, an environment and the config files under a home directory.
/// Everything it reads is injected, so tests can pin every precedence rule.
public struct SettingsResolver: Sendable {
    public var environment: [String: String]
    public var homeDirectory: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, homeDirectory: String? = nil) {
        self.environment = environment
        self.homeDirectory = homeDirectory ?? environment["HOME"] ?? NSHomeDirectory()
    }

    var configHome: String { nonEmpty(environment["XDG_CONFIG_HOME"]) ?? homeDirectory + "/.config" }
    var dataHome: String { nonEmpty(environment["XDG_DATA_HOME"]) ?? homeDirectory + "/.local/share" }
    public var r2upConfigPath: String { configHome + "/r2up/config" }
    var awsConfigPath: String { nonEmpty(environment["AWS_CONFIG_FILE"]) ?? homeDirectory + "/.aws/config" }
    var awsCredentialsPath: String {
        nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? homeDirectory + "/.aws/credentials"
    }

    public func resolve(_ flags: SettingOverrides) throws(ConfigurationError) -> Settings {
        let profileName: Sourced<String> =
            if let name = flags.profile { Sourced(value: name, source: .flag("--profile")) }
            else if let name = nonEmpty(environment["AWS_PROFILE"]) { Sourced(value: name, source: .environment("AWS_PROFILE")) }
            else if let name = nonEmpty(environment["R2UP_PROFILE"]) { Sourced(value: name, source: .environment("R2UP_PROFILE")) }
            else { Sourced(value: "default", source: .builtIn) }

        var warnings: [String] = []
        var filesRead: [String] = []
        // Each file's section for the profile, in the order they are consulted.
        var sections: [(path: String, profile: String, values: [String: String])] = []
        let explicitProfile = profileName.source != .builtIn
        var profileFound = false
        for (path, sectionName, secret) in [
            (r2upConfigPath, profileName.value, true),
            (awsCredentialsPath, profileName.value, true),
            (awsConfigPath, profileName.value == "default" ? "default" : "profile \(profileName.value)", false),
        ] {
            guard let file = try INIFile.load(path) else { continue }
            filesRead.append(path)
            // ~/.aws/config usually holds no secret, but may (the AWS CLI reads keys from it too).
            let holdsSecret = secret || file.sections.values.contains {
                $0["aws_secret_access_key"] != nil || $0["aws_session_token"] != nil
            }
            if holdsSecret, let warning = Self.permissionWarning(path) { warnings.append(warning) }
            if let values = file.sections[sectionName] {
                profileFound = true
                sections.append((path, profileName.value, values))
            }
        }
        if explicitProfile && !profileFound { throw .unknownProfile(profileName.value) }

        func fromFiles(_ key: String) -> Sourced<String>? {
            for section in sections {
                if let value = nonEmpty(section.values[key]) {
                    return Sourced(value: value, source: .file(path: section.path, profile: section.profile))
                }
            }
            return nil
        }
        func fromEnvironment(_ names: String...) -> Sourced<String>? {
            for name in names {
                if let value = nonEmpty(environment[name]) { return Sourced(value: value, source: .environment(name)) }
            }
            return nil
        }

        // A profile named on the command line wins over the environment for where to connect,
        // as who and to which bucket (as the AWS CLI does): `--profile work` means that profile.
        let profileFirst = flags.profile != nil
        func endpointFromEnvironment() -> Sourced<String>? {
            if let url = fromEnvironment("R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") { return url }
            return fromEnvironment("R2_ACCOUNT_ID").map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
        }
        func endpointFromFiles() -> Sourced<String>? {
            if let url = fromFiles("endpoint_url") { return url }
            return fromFiles("r2_account_id").map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
        }
        let endpoint: Sourced<String>? = flags.endpoint.map { Sourced(value: $0, source: .flag("--endpoint")) }
            ?? (profileFirst ? endpointFromFiles() ?? endpointFromEnvironment() : endpointFromEnvironment() ?? endpointFromFiles())
        if let text = endpoint?.value { _ = try S3Endpoint(url: text) }
        let isR2 = endpoint.map { (try? S3Endpoint(url: $0.value))?.isR2 ?? false } ?? false

        let region = flags.region.map { Sourced(value: $0, source: .flag("--region")) }
            ?? fromEnvironment("AWS_REGION", "AWS_DEFAULT_REGION") ?? fromFiles("region")
            ?? Sourced(value: isR2 ? "auto" : "us-east-1", source: .builtIn)
        // The region is signed into the Authorization header.
        if let problem = HeaderValue.problem(region.value) ?? (region.value.contains(" ") ? "it holds a space" : nil) {
            throw .invalidValue(setting: "the region (\(region.source))", value: region.value, reason: problem)
        }

        var credentialsFromEnvironment: Sourced<Credentials>?
        var credentialsFromFiles: Sourced<Credentials>?
        if let key = fromEnvironment("AWS_ACCESS_KEY_ID"), let secret = fromEnvironment("AWS_SECRET_ACCESS_KEY") {
            credentialsFromEnvironment = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"])),
                source: key.source)
        }
        if let key = fromFiles("aws_access_key_id"), let secret = fromFiles("aws_secret_access_key") {
            credentialsFromFiles = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: fromFiles("aws_session_token")?.value),
                source: key.source)
        }
        let credentials = profileFirst
            ? credentialsFromFiles ?? credentialsFromEnvironment : credentialsFromEnvironment ?? credentialsFromFiles

        let configuredBucket = profileFirst
            ? fromFiles("bucket") ?? fromEnvironment("R2UP_BUCKET") : fromEnvironment("R2UP_BUCKET") ?? fromFiles("bucket")
        let bucket = flags.bucket.map { Sourced(value: $0, source: .flag("--bucket")) } ?? configuredBucket
        var publicURL = flags.publicURL.map { Sourced(value: $0, source: .flag("--public-url")) }
            ?? (profileFirst
                ? fromFiles("public_url") ?? fromEnvironment("R2UP_PUBLIC_URL")
                : fromEnvironment("R2UP_PUBLIC_URL") ?? fromFiles("public_url"))
        if let base = publicURL {
            switch PublicBase.validated(base.value) {
            case .success(let text): publicURL = Sourced(value: text, source: base.source)
            case .failure(let problem):
                throw .invalidValue(setting: "the public URL (\(base.source))", value: base.value, reason: problem.reason)
            }
        }
        // A configured public base serves the configured bucket; another --bucket gets its own
        // path-style URLs (said once, on stderr) unless --public-url names a base for it.
        if let base = publicURL, !base.source.isFlag, let bucket, bucket.source.isFlag, let configured = configuredBucket,
            configured.value != bucket.value
        {
            warnings.append(
                "warning: the public URL \(base.value) belongs to bucket '\(configured.value)'; URLs for '\(bucket.value)' are path-style (pass \(OptionName.publicURL.option) to set its own)")
            publicURL = nil
        }
        let database = flags.database.map { Sourced(value: $0, source: .flag("--db")) }
            ?? fromEnvironment("R2UP_DB")
            ?? Sourced(value: dataHome + "/r2up/r2up.sqlite", source: .builtIn)
        let addressing: Sourced<S3Endpoint.Addressing> =
            if let style = flags.addressing { Sourced(value: style, source: .flag(style == .pathStyle ? "--path-style" : "--virtual-hosted")) }
            else if let style = fromFiles("addressing_style"), style.value == "virtual" { Sourced(value: .virtualHosted, source: style.source) }
            else { Sourced(value: .pathStyle, source: .builtIn) }
        let caBundle = flags.caBundle.map { Sourced(value: $0, source: .flag("--ca-bundle")) }
            ?? fromEnvironment("AWS_CA_BUNDLE") ?? fromFiles("ca_bundle")

        // Environment variables the named profile outranked, for `config show`.
        var outranked: [String] = []
        if profileFirst {
            let chosen: [(SettingSource?, [String])] = [
                (endpoint?.source, ["R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "R2_ACCOUNT_ID"]),
                (credentials?.source, ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]),
                (bucket?.source, ["R2UP_BUCKET"]), (publicURL?.source, ["R2UP_PUBLIC_URL"]),
            ]
            for (source, names) in chosen {
                guard case .file? = source else { continue }
                outranked += names.filter { nonEmpty(environment[$0]) != nil }
            }
        }

        var settings = Settings(
            profile: profileName, endpoint: endpoint, region: region, credentials: credentials, bucket: bucket,
            publicURL: publicURL, database: database, addressing: addressing, caBundle: caBundle?.value,
            caBundleSource: caBundle?.source,
            filesRead: filesRead, warnings: warnings, outrankedByProfile: outranked)
        settings.ignoredEnvironment = ignoredEnvironment(settings, outranked: outranked)
        return settings
    }

    /// Each variable r2up reads that is set but was not used, and why (`config show`).
    func ignoredEnvironment(_ settings: Settings, outranked: [String]) -> [IgnoredVariable] {
        var ignored: [IgnoredVariable] = []
        func note(_ name: String, _ reason: String) { ignored.append(IgnoredVariable(name: name, reason: reason)) }
        func used(_ source: SettingSource?) -> String? {
            if case .environment(let name)? = source { return name }
            return nil
        }
        func describe(_ source: SettingSource?) -> String { source.map { "\($0)" } ?? "nothing" }
        let groups: [(names: [String], source: SettingSource?)] = [
            (["AWS_PROFILE", "R2UP_PROFILE"], settings.profile.source),
            (["R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "R2_ACCOUNT_ID"], settings.endpoint?.source),
            (["AWS_REGION", "AWS_DEFAULT_REGION"], settings.region.source),
            (["R2UP_BUCKET"], settings.bucket?.source), (["R2UP_PUBLIC_URL"], settings.publicURL?.source),
            (["R2UP_DB"], settings.database.source), (["AWS_CA_BUNDLE"], settings.caBundleSource),
        ]
        for (names, source) in groups {
            for name in names {
                guard let value = environment[name], !outranked.contains(name) else { continue }
                if nonEmpty(value) == nil {
                    note(name, "it is set but empty")
                } else if let winner = used(source), winner != name {
                    note(name, "\(winner) comes first")
                } else if used(source) == nil {
                    note(name, "\(describe(source)) comes first")
                }
            }
        }
        // The keys are taken as a pair: half of one from the environment is not used.
        let key = nonEmpty(environment["AWS_ACCESS_KEY_ID"])
        let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"])
        let keysUsed = used(settings.credentials?.source) != nil
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] where !outranked.contains(name) {
            guard let value = environment[name], !keysUsed else { continue }
            if nonEmpty(value) == nil {
                note(name, "it is set but empty")
            } else if key == nil || secret == nil, name != "AWS_SESSION_TOKEN" {
                let missing = key == nil ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY"
                note(name, "\(missing) is not set, and the keys are used as a pair")
            } else {
                note(name, "the keys come from \(describe(settings.credentials?.source))")
            }
        }
        return ignored
    }

    /// A warning when a file holding secrets can be read by group or others.
    static func permissionWarning(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return nil }
        return "warning: \(path) is readable by other users; run: chmod 600 \(path)"
    }

    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return value
    }
}
