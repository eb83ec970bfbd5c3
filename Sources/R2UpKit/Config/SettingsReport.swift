import Foundation
import R2UpModel
import R2UpTransfer
import SigV4

/// `r2up config show`: every resolved setting with where it came from, and the config
/// files looked at. Secrets are described, never shown: the secret access key and the
/// session token appear as `set (N characters)`, the access key id masked.
package struct SettingsReport: Sendable, Equatable {
    /// One setting: a stable id for JSON, a label for people, the value as shown, its source.
    package struct Row: Sendable, Equatable, Encodable {
        package var id: String
        package var label: String
        /// What is printed; nil when the setting has no value.
        package var value: String?
        /// `SettingSource.description`; nil when the setting has no value.
        package var source: String?
    }

    /// A config file r2up looks at, and whether it was there to read.
    package struct File: Sendable, Equatable, Encodable {
        package var path: String
        package var read: Bool
    }

    package var rows: [Row]
    package var files: [File]
    package var warnings: [String]
    /// Set when the profile option outranked variables (the AWS CLI's rule).
    package var profileNote: String?
    /// Variables set but not used, each with why: `AWS_DEFAULT_REGION: AWS_REGION comes first`.
    package var ignored: [String] = []

    /// The report for `settings`, and the config files `resolver` reads.
    /// - Parameters:
    ///   - settings: the resolved settings, each with where its value came from.
    ///   - resolver: the resolver that made them, for the config files it reads.
    ///   - ascii: mask with `...` instead of `…` (a terminal whose locale is not UTF-8).
    package init(settings: Settings, resolver: SettingsResolver, ascii: Bool = false) {
        func row<V>(_ id: String, _ label: String, _ sourced: Sourced<V>?, _ show: (V) -> String) -> Row {
            Row(id: id, label: label, value: sourced.map { show($0.value) }, source: sourced?.source.description)
        }
        let credentials = settings.credentials
        let credentialSource = credentials?.source.description
        // The credentials come as one; from the variables, each part has its own.
        func partSource(_ variable: SettingVariable?) -> String? {
            if case .environment? = credentials?.source, let variable {
                return SettingSource.environment(variable.name).description
            }
            return credentialSource
        }
        rows = [
            row("profile", "profile", settings.profile) { $0 },
            row("endpoint", "endpoint", settings.endpoint) { $0 },
            row("region", "region", settings.region) { $0 },
            Row(
                id: "accessKeyID", label: "access key id",
                value: credentials.map { Self.mask($0.value.accessKeyID, ascii: ascii) }, source: credentialSource),
            Row(
                id: "secretAccessKey", label: "secret access key",
                value: credentials.map { Self.describeSecret($0.value.secretAccessKey) },
                source: partSource(resolver.variables.secretAccessKey)),
            Row(
                id: "sessionToken", label: "session token",
                value: credentials?.value.sessionToken.map(Self.describeSecret),
                source: credentials?.value.sessionToken == nil ? nil : partSource(resolver.variables.sessionToken)),
            row("bucket", "bucket", settings.bucket) { $0 },
            row("publicURL", "public URL", settings.publicURL) { $0 },
            row("database", "database", settings.database) { $0 },
            row("addressing", "addressing", settings.addressing) { $0 == .pathStyle ? "path-style" : "virtual-hosted" },
            Row(id: "caBundle", label: "CA bundle", value: settings.caBundle, source: settings.caBundleSource?.description),
        ]
        files = resolver.configFiles.map { File(path: $0, read: settings.filesRead.contains($0)) }
        warnings = settings.warnings
        ignored = settings.ignoredEnvironment.map { "\($0.name): \($0.reason)" }
        if !settings.outrankedByProfile.isEmpty {
            profileNote = "\(OptionName.profile.option) \(settings.profile.value): the profile's settings win over "
                + settings.outrankedByProfile.joined(separator: ", ") + " from the environment"
        }
    }

    /// `set (40 characters)`: that a secret is there and how long, never any of it.
    package static func describeSecret(_ secret: String) -> String {
        let count = secret.count
        return "set (\(count) character\(count == 1 ? "" : "s"))"
    }

    /// An access key id as its first 4 and last 4 characters (`AKIA…MPLE`); a short one,
    /// which that would show whole or nearly, only as its length.
    package static func mask(_ key: String, ascii: Bool = false) -> String {
        guard key.count >= 12 else { return describeSecret(key) }
        return "\(key.prefix(4))\(ascii ? "..." : "…")\(key.suffix(4))"
    }

    /// The report for people: a table of setting, value and source, then the files.
    /// ```
    /// profile            default                default
    /// endpoint           http://127.0.0.1:8333  environment R2UP_ENDPOINT
    /// secret access key  set (40 characters)    /home/me/.config/r2up/config [default]
    /// session token      (not set)
    ///
    /// config files:
    ///   /home/me/.config/r2up/config  read
    ///   /home/me/.aws/credentials     not found
    /// ```
    package var lines: [String] {
        var table = rows.map { row in
            [row.label, TextColumns.printable(row.value ?? "(not set)"), row.source.map(TextColumns.printable) ?? ""]
        }
        // No trailing blanks on a row without a source.
        table = table.map { $0.last == "" ? Array($0.dropLast()) : $0 }
        var lines = TextColumns.lines(table)
        if let profileNote { lines += ["", TextColumns.printable(profileNote)] }
        if !ignored.isEmpty {
            lines += ["", "ignored from the environment:"] + ignored.map { "  " + TextColumns.printable($0) }
        }
        lines.append("")
        lines.append("config files:")
        lines += TextColumns.lines(files.map { ["  " + TextColumns.printable($0.path), $0.read ? "read" : "not found"] })
        return lines
    }
}

extension SettingsReport: Encodable {
    private enum CodingKeys: String, CodingKey { case settings, files, warnings, profileNote, ignoredEnvironment }

    /// `config show --json`: `{settings: [{id, label, value, source}], files: [{path, read}],
    /// warnings: [...]}`, with null for a setting that is not set.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rows, forKey: .settings)
        try container.encode(files, forKey: .files)
        try container.encode(warnings, forKey: .warnings)
        try container.encodeIfPresent(profileNote, forKey: .profileNote)
        try container.encode(ignored, forKey: .ignoredEnvironment)
    }
}

extension SettingsReport.Row {
    private enum CodingKeys: String, CodingKey { case id, label, value, source }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(label, forKey: .label)
        try container.encode(value, forKey: .value)
        try container.encode(source, forKey: .source)
    }
}

extension SettingsResolver {
    /// The config files consulted, in the order they are read.
    package var configFiles: [String] { [r2upConfigPath, awsCredentialsPath, awsConfigPath] }
}
