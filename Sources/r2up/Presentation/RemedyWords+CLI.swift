import R2UpKit

extension RemedyWords {
    /// The CLI's words for what library messages tell the user to do: its command lines.
    static let cli = RemedyWords { remedy in
        switch remedy {
        case .runConfigInit: "run r2up config init"
        case .initProfile(let name): "run: r2up config init --profile \(name)"
        case .seeQueue: "see r2up queue"
        case .retryTriesAgain: "r2up retry tries again"
        case .pushUploadsFiles: "r2up push uploads single files"
        case .watchRestarts: "r2up watch restarts"
        }
    }
}
