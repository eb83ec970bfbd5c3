import Foundation
import SigV4
import R2UpModel
import R2UpStore
import R2UpTransfer

/// The settings checks: where they came from, and the credentials.
extension Doctor {
    func configCheck(_ settings: Settings) -> DoctorCheck {
        let profile = "profile \(settings.profile.value)"
        let read = configFiles.filter(settings.filesRead.contains)
        let detail = read.isEmpty
            ? "\(profile); no config file found, settings from flags and environment only"
            : "\(profile); read \(read.joined(separator: ", "))"
        if let warning = settings.warnings.first {
            // "warning: PATH is readable by other users; run: chmod 600 PATH"
            var text = warning.hasPrefix("warning: ") ? String(warning.dropFirst(9)) : warning
            var advice: String?
            if let split = text.range(of: "; run: ") {
                advice = "run: " + text[split.upperBound...]
                text = String(text[..<split.lowerBound])
            }
            return .warning(.config, "\(detail); \(text)", advice)
        }
        return .pass(.config, detail)
    }

    func credentialsCheck(_ settings: Settings) -> DoctorCheck {
        guard let credentials = settings.credentials else {
            return .fail(
                .credentials, "no access key id and secret access key found",
                "\(Remedy.runConfigInit), or set \(OptionName.accessKeyID.variable) and \(OptionName.secretAccessKey.variable)")
        }
        var detail = "access key id \(SettingsReport.mask(credentials.value.accessKeyID, ascii: ascii)) and a secret"
        if credentials.value.sessionToken != nil { detail += " and a session token" }
        return .pass(.credentials, detail + ", from \(credentials.source)")
    }

    static func advice(for error: ConfigurationError) -> String? {
        switch error {
        case .unknownProfile(let name): Remedy.initProfile(name).description
        // The line names the flag and variables already ("no endpoint is set; use …").
        case .missingEndpoint: "\(Remedy.runConfigInit)"
        case .invalidEndpoint: "\(Remedy.runConfigInit), or use \(OptionName.endpoint.everySource)"
        case .invalidFile: "fix that line, or \(Remedy.runConfigInit)"
        default: nil
        }
    }
}
