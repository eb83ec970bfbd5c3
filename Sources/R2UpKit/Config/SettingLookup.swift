import Foundation
import SigV4
import R2UpModel
import R2UpTransfer

/// Where `SettingsResolver` looks a setting up: the variables it was given and the profile's
/// sections of the config files (in the order they are consulted), and which of the two comes first.
struct SettingLookup {
    typealias Section = (path: String, profile: String, values: [String: String])

    let variables: SettingVariables
    let sections: [Section]
    /// A profile named on the command line wins over the variables for where to connect,
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

    func fromVariables(_ variables: [SettingVariable]) -> Sourced<String>? {
        for variable in variables {
            if let value = nonEmptySetting(variable.value) { return Sourced(value: value, source: .environment(variable.name)) }
        }
        return nil
    }

    /// The variables' or the key's value, the profile's first when one was named.
    func configured(_ variables: [SettingVariable], file key: String) -> Sourced<String>? {
        profileFirst ? fromFiles(key) ?? fromVariables(variables) : fromVariables(variables) ?? fromFiles(key)
    }

    func endpoint() -> Sourced<String>? {
        profileFirst ? endpointFromFiles() ?? endpointFromVariables() : endpointFromVariables() ?? endpointFromFiles()
    }

    private func endpointFromVariables() -> Sourced<String>? {
        if let url = fromVariables(variables.endpoint) { return url }
        return fromVariables(variables.r2Account).map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
    }

    private func endpointFromFiles() -> Sourced<String>? {
        if let url = fromFiles("endpoint_url") { return url }
        return fromFiles("r2_account_id").map { Sourced(value: S3Endpoint.r2URL(account: $0.value), source: $0.source) }
    }

    func credentials() -> Sourced<Credentials>? {
        var fromVariables: Sourced<Credentials>?
        var fromFiles: Sourced<Credentials>?
        if let key = self.fromVariables(variables.accessKeyID.map { [$0] } ?? []),
            let secret = self.fromVariables(variables.secretAccessKey.map { [$0] } ?? [])
        {
            fromVariables = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: nonEmptySetting(variables.sessionToken?.value)),
                source: key.source)
        }
        if let key = self.fromFiles("aws_access_key_id"), let secret = self.fromFiles("aws_secret_access_key") {
            fromFiles = Sourced(
                value: Credentials(accessKeyID: key.value, secretAccessKey: secret.value,
                                   sessionToken: self.fromFiles("aws_session_token")?.value),
                source: key.source)
        }
        return profileFirst ? fromFiles ?? fromVariables : fromVariables ?? fromFiles
    }

    /// The variables the named profile outranked, for `config show`.
    func outranked(endpoint: SettingSource?, credentials: SettingSource?, bucket: SettingSource?,
                   publicURL: SettingSource?) -> [String] {
        guard profileFirst else { return [] }
        let keys = [variables.accessKeyID, variables.secretAccessKey, variables.sessionToken].compactMap { $0 }
        let chosen: [(SettingSource?, [SettingVariable])] = [
            (endpoint, variables.endpoint + variables.r2Account), (credentials, keys),
            (bucket, variables.bucket), (publicURL, variables.publicURL),
        ]
        var outranked: [String] = []
        for (source, given) in chosen {
            guard case .file? = source else { continue }
            outranked += given.filter { nonEmptySetting($0.value) != nil }.map(\.name)
        }
        return outranked
    }
}

/// A setting's text, or nil when it is missing or only white space (an empty variable is unset).
func nonEmptySetting(_ value: String?) -> String? {
    guard let value, !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
    return value
}
