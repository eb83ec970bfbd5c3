import Foundation

/// `r2up presign --expires`: "90s", "15m", "12h", "7d" or plain seconds; SigV4 allows 1 s to 7 days.
public enum PresignExpiry {
    public static let maximumSeconds = 7 * 24 * 3600

    /// The seconds, or a message naming the problem.
    public static func seconds(_ text: String) -> Result<Int, PresignExpiryError> {
        guard let duration = SyncDuration.parse(text) else { return .failure(.unreadable(text)) }
        let seconds = Int(duration.components.seconds)
        guard duration.components.attoseconds == 0, (1...maximumSeconds).contains(seconds) else {
            return .failure(.outOfRange(text))
        }
        return .success(seconds)
    }
}

public enum PresignExpiryError: Error, Equatable, CustomStringConvertible {
    case unreadable(String)
    case outOfRange(String)

    public var description: String {
        switch self {
        case .unreadable(let text): "--expires '\(text)' is not a duration like 3600, 90m, 12h or 7d"
        case .outOfRange(let text): "--expires must be from 1s to 7d (whole seconds), got \(text)"
        }
    }
}
