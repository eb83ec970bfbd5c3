import Synchronization

/// What the user can do about a failure when a command of the program does it. The library
/// says which; whoever shows the message words it: the CLI as its command line
/// (`run r2up config init`), an app in its own words (`RemedyWords.neutral` by default).
/// Interpolated into a message, it reads as a clause: "no bucket is set; \(Remedy.runConfigInit)".
public enum Remedy: Sendable, Equatable, CustomStringConvertible {
    /// Set up the settings: "run r2up config init".
    case runConfigInit
    /// Set up the named profile: "run: r2up config init --profile NAME".
    case initProfile(String)
    /// List the queued jobs and their ids: "see r2up queue".
    case seeQueue
    /// A failed upload is tried again by a retry: "r2up retry tries again".
    case retryTriesAgain
    /// Single files are uploaded by a push: "r2up push uploads single files".
    case pushUploadsFiles
    /// A watch takes a folder again when it starts again: "r2up watch restarts".
    case watchRestarts

    /// The remedy as the running program words it.
    public var description: String { RemedyWords.current.words(self) }
}

/// The words for `Remedy`s in messages the library writes. A program installs its own once,
/// before it runs anything (the CLI installs its commands'); the default suits an app.
public struct RemedyWords: Sendable {
    /// The words for one remedy.
    public var words: @Sendable (Remedy) -> String

    /// - Parameter words: the words for a remedy.
    public init(words: @escaping @Sendable (Remedy) -> String) {
        self.words = words
    }

    /// Plain words an app can show.
    public static let neutral = RemedyWords { remedy in
        switch remedy {
        case .runConfigInit: "set up a profile"
        case .initProfile(let name): "set up the profile \(name)"
        case .seeQueue: "see the queue"
        case .retryTriesAgain: "a retry tries again"
        case .pushUploadsFiles: "single files are uploaded one by one"
        case .watchRestarts: "watching starts again"
        }
    }

    private static let installed = Mutex(RemedyWords.neutral)

    /// The words messages use now.
    public static var current: RemedyWords { installed.withLock { $0 } }

    /// Makes `words` the ones every later message uses.
    public static func install(_ words: RemedyWords) {
        installed.withLock { $0 = words }
    }
}
