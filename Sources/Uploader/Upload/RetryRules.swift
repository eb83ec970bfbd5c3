import Foundation

/// Whether trying again can help.
public enum RetryClass: String, Sendable, Equatable {
    case retryable, permanent
}

/// A failure reduced to what the retry rules need (DESIGN §5).
public enum FailureKind: Sendable, Equatable {
    case connectionRefused, connectionReset, timeout, dnsFailure, tlsFailure
    case httpStatus(Int, code: String)
    case fileVanished, fileUnreadable, fileChanged, invalidInput
    case cancelled
    case other(String)

    /// DESIGN §5 and PEERS §3 item 14: network trouble, 5xx, 429, SlowDown, RequestTimeout,
    /// a skewed clock (after correction) and BadDigest (bytes damaged in transit) are worth
    /// another try; auth failures, a missing bucket and bad input are not.
    public var retryClass: RetryClass {
        switch self {
        case .connectionRefused, .connectionReset, .timeout:
            return .retryable
        case .dnsFailure, .tlsFailure, .fileVanished, .fileUnreadable, .invalidInput, .cancelled, .other:
            return .permanent
        case .fileChanged:
            return .retryable
        case .httpStatus(let status, let code):
            switch code {
            case "SlowDown", "RequestTimeout", "RequestTimeTooSkewed", "InternalError", "ServiceUnavailable",
                "TooManyRequests", "BadDigest", "IncompleteBody", "ClientDisconnect", "OperationAborted":
                return .retryable
            case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "NoSuchBucket", "EntityTooLarge",
                "InvalidArgument", "InvalidDigest", "EntityTooSmall", "InvalidPart", "InvalidPartOrder",
                "InvalidObjectName", "MetadataTooLarge", "ExpiredToken", "InvalidToken", "NoSuchUpload",
                "AuthorizationHeaderMalformed", "NotImplemented", "InvalidBucketName", "KeyTooLongError":
                return .permanent
            default:
                return status == 429 || status >= 500 || status == 408 ? .retryable : .permanent
            }
        }
    }
}

/// How one request (a PUT, a part) is retried inside an upload: quick tries with `Backoff`.
/// Job-level retries across runs are `JobRetryPolicy`'s.
public struct RequestRetryPolicy: Sendable {
    public var base: Duration
    public var cap: Duration
    /// BadDigest means the bytes arrived damaged; a few resends, then it is treated as permanent.
    public var maxBadDigestAttempts: Int
    /// Returns a value in [0, 1); injected so tests can pin the jitter.
    public var random: @Sendable () -> Double

    public init(
        base: Duration = .milliseconds(200), cap: Duration = .seconds(20), maxBadDigestAttempts: Int = 3,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.base = base
        self.cap = cap
        self.maxBadDigestAttempts = maxBadDigestAttempts
        self.random = random
    }

    /// The wait before trying again after `attempt` failures of `kind`, or nil to give up now.
    public func delayBeforeRetry(_ kind: FailureKind, attempt: Int) -> Duration? {
        guard kind.retryClass == .retryable else { return nil }
        if case .httpStatus(_, "BadDigest") = kind, attempt >= maxBadDigestAttempts { return nil }
        if kind == .fileChanged { return nil }  // handled by the caller: the job goes back to staged
        return Backoff.delay(attempt: attempt, base: base, cap: cap, random: random())
    }
}

extension UploadError {
    /// The failure kind the retry rules look at.
    public var failureKind: FailureKind {
        switch self {
        case .fileNotFound: return .fileVanished
        case .notARegularFile, .invalidPartSize, .fileTooLarge, .invalidKey: return .invalidInput
        case .fileUnreadable: return .fileUnreadable
        case .fileChanged: return .fileChanged
        case .verificationFailed(_, let reason): return .other(reason)
        case .s3(let error): return error.failureKind
        }
    }
}

extension S3ClientError {
    public var failureKind: FailureKind {
        switch self {
        case .service(let failure): return .httpStatus(failure.status, code: failure.code)
        case .unexpectedResponse(let text): return .other(text)
        case .transfer(let failure):
            switch failure.kind {
            case .connectionRefused: return .connectionRefused
            case .connectionReset: return .connectionReset
            case .timeout: return .timeout
            case .dnsFailure: return .dnsFailure
            case .tlsFailure: return .tlsFailure
            case .fileReadFailed: return .fileUnreadable
            case .fileShorterThanExpected: return .fileChanged
            case .cancelled: return .cancelled
            case .malformedURL, .responseTooLarge, .fileWriteFailed, .other: return .other(failure.message)
            }
        }
    }
}
