import Foundation
import SigV4
package import R2UpModel
import R2UpTransfer

/// Resolves `Settings` from flags, an environment and the config files under a home directory.
/// Everything it reads is injected, so tests can pin every precedence rule.
package struct SettingsResolver: Sendable {
    package var environment: [String: String]
    package var homeDirectory: String

    package init(environment: [String: String] = ProcessInfo.processInfo.environment, homeDirectory: String? = nil) {
        self.environment = environment
        self.homeDirectory = homeDirectory ?? environment["HOME"] ?? NSHomeDirectory()
    }

    var configHome: String { nonEmpty(environment["XDG_CONFIG_HOME"]) ?? homeDirectory + "/.config" }
    var dataHome: String { nonEmpty(environment["XDG_DATA_HOME"]) ?? homeDirectory + "/.local/share" }
    package var r2upConfigPath: String { configHome + "/r2up/config" }
    var awsConfigPath: String { nonEmpty(environment["AWS_CONFIG_FILE"]) ?? homeDirectory + "/.aws/config" }
    var awsCredentialsPath: String {
        nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) ?? homeDirectory + "/.aws/credentials"
    }

    package func resolve(_ flags: SettingOverrides) throws(ConfigurationError) -> Settings {
        let profileName = profileName(flags)
        let files = try readProfile(profileName)
        var warnings = files.warnings
        let lookup = SettingLookup(environment: environment, sections: files.sections, profileFirst: flags.profile != nil)

        let endpoint: Sourced<String>? = flags.endpoint.map { Sourced(value: $0, source: .flag("--endpoint")) }
            ?? lookup.endpoint()
        if let text = endpoint?.value { _ = try S3Endpoint(url: text) }
        let isR2 = endpoint.map { (try? S3Endpoint(url: $0.value))?.isR2 ?? false } ?? false

        let region = flags.region.map { Sourced(value: $0, source: .flag("--region")) }
            ?? lookup.fromEnvironment("AWS_REGION", "AWS_DEFAULT_REGION") ?? lookup.fromFiles("region")
            ?? Sourced(value: isR2 ? "auto" : "us-east-1", source: .builtIn)
        // The region is signed into the Authorization header.
        if let problem = HeaderValue.problem(region.value) ?? (region.value.contains(" ") ? "it holds a space" : nil) {
            throw .invalidValue(setting: "the region (\(region.source))", value: region.value, reason: problem)
        }
        let credentials = lookup.credentials()

        let configuredBucket = lookup.configured(environment: "R2UP_BUCKET", file: "bucket")
        let bucket = flags.bucket.map { Sourced(value: $0, source: .flag("--bucket")) } ?? configuredBucket
        let publicURL = try publicURL(
            flags, lookup: lookup, bucket: bucket, configuredBucket: configuredBucket, warnings: &warnings)
        let database = flags.database.map { Sourced(value: $0, source: .flag("--db")) }
            ?? lookup.fromEnvironment("R2UP_DB")
            ?? Sourced(value: dataHome + "/r2up/r2up.sqlite", source: .builtIn)
        let addressing: Sourced<S3Endpoint.Addressing> =
            if let style = flags.addressing { Sourced(value: style, source: .flag(style == .pathStyle ? "--path-style" : "--virtual-hosted")) }
            else if let style = lookup.fromFiles("addressing_style"), style.value == "virtual" { Sourced(value: .virtualHosted, source: style.source) }
            else { Sourced(value: .pathStyle, source: .builtIn) }
        let caBundle = flags.caBundle.map { Sourced(value: $0, source: .flag("--ca-bundle")) }
            ?? lookup.fromEnvironment("AWS_CA_BUNDLE") ?? lookup.fromFiles("ca_bundle")

        let outranked = lookup.outranked(
            endpoint: endpoint?.source, credentials: credentials?.source, bucket: bucket?.source,
            publicURL: publicURL?.source)
        var settings = Settings(
            profile: profileName, endpoint: endpoint, region: region, credentials: credentials, bucket: bucket,
            publicURL: publicURL, database: database, addressing: addressing, caBundle: caBundle?.value,
            caBundleSource: caBundle?.source,
            filesRead: files.read, warnings: warnings, outrankedByProfile: outranked)
        settings.ignoredEnvironment = ignoredEnvironment(settings, outranked: outranked)
        return settings
    }

    private func profileName(_ flags: SettingOverrides) -> Sourced<String> {
        if let name = flags.profile { Sourced(value: name, source: .flag("--profile")) }
        else if let name = nonEmpty(environment["AWS_PROFILE"]) { Sourced(value: name, source: .environment("AWS_PROFILE")) }
        else if let name = nonEmpty(environment["R2UP_PROFILE"]) { Sourced(value: name, source: .environment("R2UP_PROFILE")) }
        else { Sourced(value: "default", source: .builtIn) }
    }

    /// Each config file's section for the profile, in the order they are consulted, the files
    /// read and their permission warnings.
    private func readProfile(_ profileName: Sourced<String>) throws(ConfigurationError)
        -> (sections: [SettingLookup.Section], read: [String], warnings: [String])
    {
        var warnings: [String] = []
        var filesRead: [String] = []
        var sections: [SettingLookup.Section] = []
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
        if profileName.source != .builtIn && !profileFound { throw .unknownProfile(profileName.value) }
        return (sections, filesRead, warnings)
    }

    private func publicURL(
        _ flags: SettingOverrides, lookup: SettingLookup, bucket: Sourced<String>?, configuredBucket: Sourced<String>?,
        warnings: inout [String]
    ) throws(ConfigurationError) -> Sourced<String>? {
        var publicURL = flags.publicURL.map { Sourced(value: $0, source: .flag("--public-url")) }
            ?? lookup.configured(environment: "R2UP_PUBLIC_URL", file: "public_url")
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
        return publicURL
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

    private func nonEmpty(_ value: String?) -> String? { nonEmptySetting(value) }
}
