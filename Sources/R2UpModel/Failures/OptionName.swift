import Synchronization

/// A setting or option a message points the user to. The library says which one; whoever
/// shows the message names it: the CLI as its flags and environment variables
/// (`--bucket or R2UP_BUCKET`), an app in its own words (`OptionWords.neutral` by default).
public enum OptionName: String, Sendable, CaseIterable {
    case endpoint, bucket, region, caBundle, publicURL, database, profile, accessKeyID, secretAccessKey
    /// The two ways of addressing a bucket, each its own option.
    case pathStyle, virtualHosted
    case concurrency, overwrite, key, prefix, keyTemplate, meta, keepETag
    case delete, deleteMax, deleteMoved, force, wait, dryRun

    /// How a message names the option.
    public enum Form: Sendable, CaseIterable {
        /// The option itself: `--overwrite`, or "the overwrite option".
        case option
        /// The option or its variable: `--bucket or R2UP_BUCKET`.
        case sources
        /// Every place the setting can come from: `--endpoint, R2UP_ENDPOINT or R2_ACCOUNT_ID`.
        case everySource
        /// The environment variable (or its equivalent): `R2UP_PUBLIC_URL`.
        case variable
        /// The option's name alone, without its argument, as a setting's source: `--ca-bundle`.
        case name
    }

    /// The option as the running program names it.
    public var option: String { OptionWords.current.name(self, .option) }
    /// The option or its variable, as the running program names them.
    public var sources: String { OptionWords.current.name(self, .sources) }
    /// Every place the setting can come from, as the running program names them.
    public var everySource: String { OptionWords.current.name(self, .everySource) }
    /// The setting's variable, as the running program names it.
    public var variable: String { OptionWords.current.name(self, .variable) }
}

/// The words for `OptionName`s in messages the library writes. A program installs its own once,
/// before it runs anything (the CLI installs its flags'); the default suits an app.
public struct OptionWords: Sendable {
    /// The words for one option in one form.
    public var name: @Sendable (OptionName, OptionName.Form) -> String

    /// - Parameter name: the words for an option in a form.
    public init(name: @escaping @Sendable (OptionName, OptionName.Form) -> String) {
        self.name = name
    }

    /// Plain words an app can show: "the bucket setting", "the overwrite option".
    public static let neutral = OptionWords { option, form in
        let words: String
        switch option {
        case .endpoint: words = "endpoint"
        case .bucket: words = "bucket"
        case .region: words = "region"
        case .caBundle: words = "CA bundle"
        case .publicURL: words = "public URL"
        case .database: words = "database path"
        case .profile: words = "profile"
        case .pathStyle: words = "path-style"
        case .virtualHosted: words = "virtual-hosted"
        case .accessKeyID: words = "access key id"
        case .secretAccessKey: words = "secret access key"
        case .concurrency: words = "concurrency"
        case .overwrite: words = "overwrite"
        case .key: words = "key"
        case .prefix: words = "prefix"
        case .keyTemplate: words = "key template"
        case .meta: words = "metadata"
        case .keepETag: words = "keep-ETag"
        case .delete: words = "delete"
        case .deleteMax: words = "delete limit"
        case .deleteMoved: words = "delete-moved"
        case .force: words = "force"
        case .wait: words = "wait"
        case .dryRun: words = "dry-run"
        }
        return form == .option || form == .name ? "the \(words) option" : "the \(words) setting"
    }

    private static let installed = Mutex(OptionWords.neutral)

    /// The words messages use now.
    public static var current: OptionWords { installed.withLock { $0 } }

    /// Makes `words` the ones every later message uses.
    public static func install(_ words: OptionWords) {
        installed.withLock { $0 = words }
    }
}
