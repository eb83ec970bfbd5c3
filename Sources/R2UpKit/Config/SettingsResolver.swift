import Foundation
import SigV4
package import R2UpModel
import R2UpTransfer

/// Resolves `Settings` from flags, variables and the config files (DESIGN §2). Everything it
/// reads is given to it (the CLI reads its environment into `SettingVariables` and
/// `ConfigLocations`), so tests can pin every precedence rule.
package struct SettingsResolver: Sendable {
    package var variables: SettingVariables
    package var locations: ConfigLocations

    /// - Parameters:
    ///   - variables: the settings given between the flags and the config files.
    ///   - locations: where the config files are.
    package init(variables: SettingVariables = SettingVariables(), locations: ConfigLocations) {
        self.variables = variables
        self.locations = locations
    }

    package var r2upConfigPath: String { locations.r2upConfig }
    var awsConfigPath: String { locations.awsConfig }
    var awsCredentialsPath: String { locations.awsCredentials }

    package func resolve(_ flags: SettingOverrides) throws(ConfigurationError) -> Settings {
        let profileName = profileName(flags)
        let files = try readProfile(profileName)
        var warnings = files.warnings
        let lookup = SettingLookup(variables: variables, sections: files.sections, profileFirst: flags.profile != nil)

        let endpoint: Sourced<String>? = flags.endpoint.map { Sourced(value: $0, source: .flag(.endpoint)) }
            ?? lookup.endpoint()
        var parsedEndpoint: S3Endpoint?
        if let endpoint {
            // Parsed once: the message names where the value came from.
            guard let parsed = try? S3Endpoint(url: endpoint.value) else {
                throw .invalidEndpoint(endpoint.value, source: "\(endpoint.source)")
            }
            parsedEndpoint = parsed
        }
        let isR2 = parsedEndpoint?.isR2 ?? false

        let region = flags.region.map { Sourced(value: $0, source: .flag(.region)) }
            ?? lookup.fromVariables(variables.region) ?? lookup.fromFiles("region")
            ?? Sourced(value: isR2 ? "auto" : "us-east-1", source: .builtIn)
        // The region is signed into the Authorization header.
        if let problem = HeaderValue.problem(region.value) ?? (region.value.contains(" ") ? "it holds a space" : nil) {
            throw .invalidValue(setting: "the region (\(region.source))", value: region.value, reason: problem)
        }
        let credentials = lookup.credentials()

        let configuredBucket = lookup.configured(variables.bucket, file: "bucket")
        let bucket = flags.bucket.map { Sourced(value: $0, source: .flag(.bucket)) } ?? configuredBucket
        let publicURL = try publicURL(
            flags, lookup: lookup, bucket: bucket, configuredBucket: configuredBucket, endpoint: parsedEndpoint,
            warnings: &warnings)
        let database = flags.database.map { Sourced(value: $0, source: .flag(.database)) }
            ?? lookup.fromVariables(variables.database)
            ?? Sourced(value: locations.defaultDatabase, source: .builtIn)
        let addressing: Sourced<S3Endpoint.Addressing> =
            if let style = flags.addressing { Sourced(value: style, source: .flag(style == .pathStyle ? .pathStyle : .virtualHosted)) }
            else if let style = lookup.fromFiles("addressing_style"), style.value == "virtual" { Sourced(value: .virtualHosted, source: style.source) }
            else { Sourced(value: .pathStyle, source: .builtIn) }
        let caBundle = flags.caBundle.map { Sourced(value: $0, source: .flag(.caBundle)) }
            ?? lookup.fromVariables(variables.caBundle) ?? lookup.fromFiles("ca_bundle")

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
        if let name = flags.profile { Sourced(value: name, source: .flag(.profile)) }
        else if let given = variables.profile.first(where: { nonEmpty($0.value) != nil }), let name = given.value {
            Sourced(value: name, source: .environment(given.name))
        }
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
        endpoint: S3Endpoint?, warnings: inout [String]
    ) throws(ConfigurationError) -> Sourced<String>? {
        var publicURL = flags.publicURL.map { Sourced(value: $0, source: .flag(.publicURL)) }
            ?? lookup.configured(variables.publicURL, file: "public_url")
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
        // A base on the endpoint itself names its bucket in its path (SeaweedFS, MinIO): one that
        // names another bucket (R2UP_BUCKET changed, R2UP_PUBLIC_URL kept) would print URLs that
        // serve that bucket's object.
        if let base = publicURL, !base.source.isFlag, let bucket, let endpoint,
            let other = Self.bucketNamed(by: base.value, on: endpoint), other != bucket.value
        {
            warnings.append(
                "warning: the public URL \(base.value) is bucket '\(other)' on the endpoint; URLs for '\(bucket.value)' are path-style (pass \(OptionName.publicURL.option) to set its own)")
            publicURL = nil
        }
        return publicURL
    }

    /// The bucket a path-style public base on the endpoint's own host serves (its first path
    /// segment after the endpoint's path), nil for any other base.
    static func bucketNamed(by base: String, on endpoint: S3Endpoint) -> String? {
        guard let url = URLComponents(string: base),
            url.scheme?.lowercased() == endpoint.scheme, url.host?.lowercased() == endpoint.host, url.port == endpoint.port
        else { return nil }
        var path = url.path
        let prefix = endpoint.basePath  // without a trailing '/'
        guard prefix.isEmpty || path == prefix || path.hasPrefix(prefix + "/") else { return nil }
        path = String(path.dropFirst(prefix.count))
        let first = path.split(separator: "/", omittingEmptySubsequences: true).first.map(String.init)
        return first.flatMap { $0.removingPercentEncoding }
    }

    /// Each variable given that is set but was not used, and why (`config show`).
    func ignoredEnvironment(_ settings: Settings, outranked: [String]) -> [IgnoredVariable] {
        var ignored: [IgnoredVariable] = []
        func note(_ name: String, _ reason: String) { ignored.append(IgnoredVariable(name: name, reason: reason)) }
        func used(_ source: SettingSource?) -> String? {
            if case .environment(let name)? = source { return name }
            return nil
        }
        func describe(_ source: SettingSource?) -> String { source.map { "\($0)" } ?? "nothing" }
        let groups: [(variables: [SettingVariable], source: SettingSource?)] = [
            (variables.profile, settings.profile.source),
            (variables.endpoint + variables.r2Account, settings.endpoint?.source),
            (variables.region, settings.region.source),
            (variables.bucket, settings.bucket?.source), (variables.publicURL, settings.publicURL?.source),
            (variables.database, settings.database.source), (variables.caBundle, settings.caBundleSource),
        ]
        for (given, source) in groups {
            for variable in given {
                guard let value = variable.value, !outranked.contains(variable.name) else { continue }
                if nonEmpty(value) == nil {
                    note(variable.name, "it is set but empty")
                } else if let winner = used(source), winner != variable.name {
                    note(variable.name, "\(winner) comes first")
                } else if used(source) == nil {
                    note(variable.name, "\(describe(source)) comes first")
                }
            }
        }
        ignored += ignoredKeys(settings, outranked: outranked)
        return ignored
    }

    /// The keys are taken as a pair: half of one from the variables is not used.
    private func ignoredKeys(_ settings: Settings, outranked: [String]) -> [IgnoredVariable] {
        let key = variables.accessKeyID, secret = variables.secretAccessKey
        let keySet = nonEmpty(key?.value) != nil, secretSet = nonEmpty(secret?.value) != nil
        if case .environment? = settings.credentials?.source { return [] }
        var ignored: [IgnoredVariable] = []
        for variable in [key, secret, variables.sessionToken].compactMap({ $0 }) where !outranked.contains(variable.name) {
            guard let value = variable.value else { continue }
            let reason: String
            if nonEmpty(value) == nil {
                reason = "it is set but empty"
            } else if !keySet || !secretSet, variable.name != variables.sessionToken?.name {
                let missing = (keySet ? secret : key)?.name ?? "the other key"
                reason = "\(missing) is not set, and the keys are used as a pair"
            } else {
                reason = "the keys come from \(settings.credentials.map { "\($0.source)" } ?? "nothing")"
            }
            ignored.append(IgnoredVariable(name: variable.name, reason: reason))
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
