import Foundation
import SigV4
import R2UpModel
import R2UpTransfer

/// Where `SettingsResolver` looks a setting up: the environment and the profile's sections of
/// the config files (in the order they are consulted), and which of the two comes first.
struct SettingLookup {
    typealias Section = (path: String, profile: String, values: [String: String])

    let environment: [String: String]
    let sections: [Section]
    /// A profile named on the command line wins over the environment for where to connect,
    /// as who and to which bucket (as the AWS CLI does): `--profile work` means that profile.
    let profileFirst: Bool

    func fromFiles(_ key: String) -> Sourced<String>? {
        for section in sections {
            if let value = nonEmptySetting(section.values[key]) {
                return Sourced(value: value, source: .file(path: section.path, profile: section.profile))
            }
        }
        return nil
    }

    func fromEnvironment(_ names: String...) -> Sourced<String>? { fromEnvironment(names) }

    func fromEnvironment(_ names: [String]) -> Sourced<String>? {
        for name in names {
            if let value = nonEmptySetting(environment[name]) { return Sourced(value: value, source: .environment(name)) }
        }
        return nil
    }

    /// The variable's or the key's value, the profile's first when one was named.
    func configured(environment name: String, file key: String) -> Sourced<String>? {
        profileFirst ? fromFiles(key) ?? fromEnvironment(name) : fromEnvironment(name) ?? fromFiles(key)
    }

    func endpoint() -> Sourced<String>? {
        profileFirst ? endpointFromFiles() ?? endpointFromEnvironment() : endpointFromEnvironment() ?? endpointFromFiles()
    }

    private func endpointFromEnvironment() -> Sourced<String>? {
        if let url = fromEnvironment("R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") { return url }
        return fromEnvironment("R2_ACCOUNT_ID").map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
    }

    private func endpointFromFiles() -> Sourced<String>? {
        if let url = fromFiles("endpoint_url") { return url }
        return fromFiles("r2_account_id").map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
    }

    func credentials() -> Sourced<Credentials>? {
        var fromEnvironment: Sourced<Credentials>?
        var fromFiles: Sourced<Credentials>?
        if let key = self.fromEnvironment("AWS_ACCESS_KEY_ID"), let secret = self.fromEnvironment("AWS_SECRET_ACCESS_KEY") {
            fromEnvironment = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: nonEmptySetting(environment["AWS_SESSION_TOKEN"])),
                source: key.source)
        }
        if let key = self.fromFiles("aws_access_key_id"), let secret = self.fromFiles("aws_secret_access_key") {
            fromFiles = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: self.fromFiles("aws_session_token")?.value),
                source: key.source)
        }
        return profileFirst ? fromFiles ?? fromEnvironment : fromEnvironment ?? fromFiles
    }

    /// Environment variables the named profile outranked, for `config show`.
    func outranked(endpoint: SettingSource?, credentials: SettingSource?, bucket: SettingSource?,
                   publicURL: SettingSource?) -> [String] {
        guard profileFirst else { return [] }
        let chosen: [(SettingSource?, [String])] = [
            (endpoint, ["R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "R2_ACCOUNT_ID"]),
            (credentials, ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]),
            (bucket, ["R2UP_BUCKET"]), (publicURL, ["R2UP_PUBLIC_URL"]),
        ]
        var outranked: [String] = []
        for (source, names) in chosen {
            guard case .file? = source else { continue }
            outranked += names.filter { nonEmptySetting(environment[$0]) != nil }
        }
        return outranked
    }
}

/// A setting's text, or nil when it is missing or only white space (an empty variable is unset).
func nonEmptySetting(_ value: String?) -> String? {
    guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
    return value
}
