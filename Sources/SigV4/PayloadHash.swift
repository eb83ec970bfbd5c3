/// What the signature says about the body: its SHA-256, or that it is not signed.
public enum PayloadHash: Sendable, Equatable {
    /// `UNSIGNED-PAYLOAD`: the body stays out of the signature (a Content-MD5 can protect it instead).
    case unsigned
    /// The lower-case hex SHA-256 of the body.
    case sha256(hex: String)

    /// The hash of an empty body, for GET, HEAD, DELETE and empty PUTs.
    public static let empty = PayloadHash.sha256(hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    /// The value of `x-amz-content-sha256`, which is also the last line of the canonical request.
    public var headerValue: String {
        switch self {
        case .unsigned: return "UNSIGNED-PAYLOAD"
        case .sha256(let hex): return hex
        }
    }
}

/// The one way signing can fail: a presigned URL asked to live for longer than S3 allows, or for no time at all.
public enum SigV4Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The requested expiry in seconds, outside 1...604800 (seven days).
    case expiryOutOfRange(Int)

    /// A sentence that says what went wrong and what is allowed.
    public var description: String {
        switch self {
        case .expiryOutOfRange(let seconds):
            return "a presigned URL cannot expire after \(seconds) s: the allowed range is 1 s to 7 days (604800 s)"
        }
    }
}
