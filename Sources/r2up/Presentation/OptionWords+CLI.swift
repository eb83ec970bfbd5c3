import R2UpKit

extension OptionWords {
    /// The CLI's names for what library messages point to: its flags and environment variables.
    static let cli = OptionWords { option, form in
        let flag: String
        var variable: String?
        switch option {
        case .endpoint: (flag, variable) = ("--endpoint", "R2UP_ENDPOINT")
        case .bucket: (flag, variable) = ("--bucket", "R2UP_BUCKET")
        case .region: (flag, variable) = ("--region", "AWS_REGION")
        case .caBundle: (flag, variable) = ("--ca-bundle FILE", "AWS_CA_BUNDLE")
        case .publicURL: (flag, variable) = ("--public-url", "R2UP_PUBLIC_URL")
        case .database: (flag, variable) = ("--db", "R2UP_DB")
        case .profile: (flag, variable) = ("--profile", "R2UP_PROFILE")
        case .pathStyle: flag = "--path-style"
        case .virtualHosted: flag = "--virtual-hosted"
        // The credentials have no flag: only the variable (or a profile) gives them.
        case .accessKeyID: (flag, variable) = ("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID")
        case .secretAccessKey: (flag, variable) = ("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY")
        case .concurrency: flag = "--concurrency"
        case .overwrite: flag = "--overwrite"
        case .key: flag = "--key"
        case .prefix: flag = "--prefix"
        case .keyTemplate: flag = "--key-template"
        case .meta: flag = "--meta"
        case .keepETag: flag = "--keep-etag"
        case .delete: flag = "--delete"
        case .deleteMax: flag = "--delete-max"
        case .deleteMoved: flag = "--delete-moved"
        case .force: flag = "--force"
        case .wait: flag = "--wait"
        case .dryRun: flag = "--dry-run"
        }
        switch form {
        // Without the argument a message that says to pass it shows (`--ca-bundle FILE`).
        case .name: return String(flag.prefix { $0 != " " })
        case .option: return flag
        case .variable: return variable ?? flag
        case .sources: return variable.map { $0 == flag ? flag : "\(flag) or \($0)" } ?? flag
        case .everySource:
            guard let variable else { return flag }
            // The endpoint can also come from the account id alone.
            return option == .endpoint ? "\(flag), \(variable) or R2_ACCOUNT_ID" : "\(flag) or \(variable)"
        }
    }
}
