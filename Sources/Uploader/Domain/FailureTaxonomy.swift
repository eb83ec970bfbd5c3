import Foundation

// The failure taxonomy (DESIGN §5): every failure r2up meets — a transfer error, an S3
// status and code, a file-system error, a store error — is classified here, once, into
// what the retry rules see (`FailureKind`, its `RetryClass`), whether it is about one file
// or the whole run (`FailureScope`), and what the user reads with which exit code
// (`Diagnosis`, `ExitStatus`). push, sync, pull, retry and doctor all go through it.

/// DESIGN §3's exit codes, and the one-line explanation of an error that goes with them.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case uploadFailed = 1
    case badInput = 2
    case configuration = 3
    case locked = 4
    case storeFailure = 5
    /// Ctrl-C (SIGINT) or SIGTERM: what was left is resumable (128 + SIGINT, as shells expect).
    case interrupted = 130
}

/// An error as the user should see it: one line, and the exit code it leads to.
public struct Diagnosis: Sendable, Equatable {
    public var status: ExitStatus
    public var message: String

    public init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }

    /// Explains any error r2up raises; `subject` (a file or key) starts the line when given.
    public init(_ error: any Error, subject: String? = nil) {
        let prefix = subject.map { "\($0): " } ?? ""
        switch error {
        case let error as ConfigurationError:
            self.init(status: .configuration, message: error.description)
        case let error as UploadError:
            switch error {
            case .fileNotFound, .notARegularFile, .fileUnreadable, .invalidKey, .invalidPartSize, .fileTooLarge:
                self.init(status: .badInput, message: error.description)
            case .s3(let inner):
                let diagnosis = Diagnosis(inner, subject: subject)
                self.init(status: diagnosis.status, message: diagnosis.message)
            case .store(let inner):
                self.init(status: .storeFailure, message: inner.description)
            default:
                // Some descriptions already start with the path; never print it twice.
                let text = error.description
                self.init(status: .uploadFailed, message: text.hasPrefix(prefix) ? text : prefix + text)
            }
        case let error as S3ClientError:
            self.init(Self.explain(error), prefix: prefix)
        case let error as StoreError:
            // The database, not the file being handled: its description names the path.
            self.init(status: .storeFailure, message: error.description)
        case is CancellationError:
            self.init(status: .interrupted, message: "interrupted")
        default:
            self.init(status: .uploadFailed, message: prefix + String(describing: error))
        }
    }

    /// A refused connection before any reply: the endpoint, not a file, is what is wrong.
    static func unreachable(_ error: any Error) -> String {
        var detail = String(describing: error)
        if case .s3(.transfer(let failure))? = error as? UploadError { detail = failure.message }
        if case .transfer(let failure)? = error as? S3ClientError { detail = failure.message }
        return "the endpoint refused the connection (\(detail)): is the server running? check --endpoint or R2UP_ENDPOINT"
    }

    private init(_ pair: (ExitStatus, String), prefix: String) {
        self.init(status: pair.0, message: pair.0 == .configuration ? pair.1 : prefix + pair.1)
    }

    private static func explain(_ error: S3ClientError) -> (ExitStatus, String) {
        switch error {
        case .service(let failure):
            switch failure.code {
            case "InvalidAccessKeyId":
                return (.configuration, "the access key id is not known to the server (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID or the profile")
            case "SignatureDoesNotMatch":
                // Two causes look the same from here; a request rewritten on the way (a proxy
                // that normalises paths or re-encodes headers) is the one people miss.
                return (
                    .configuration,
                    "the server computed another signature (SignatureDoesNotMatch): either the secret access key is wrong (check AWS_SECRET_ACCESS_KEY or the profile) or something between r2up and the server rewrote the request (a proxy changing the path or headers)"
                )
            case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
                return (.configuration, "the session token is expired or invalid (\(failure.code)); get new credentials")
            case "AccessDenied":
                return (.configuration, "access denied (AccessDenied); the credentials are not allowed to write to this bucket")
            case "NoSuchBucket":
                return (.configuration, "the bucket does not exist (NoSuchBucket); check --bucket or R2UP_BUCKET")
            case "InvalidBucketName":
                return (.configuration, "the server refused the bucket name (InvalidBucketName); check --bucket or R2UP_BUCKET")
            case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException":
                return (.configuration, "the server rejected the region (\(failure.code)); check --region or AWS_REGION")
            case "RequestTimeTooSkewed":
                return (.configuration, "this machine's clock is too far from the server's (RequestTimeTooSkewed); set the clock right (NTP)")
            default:
                if failure.code.isEmpty && failure.message.hasPrefix("the reply is not an S3") {
                    return (.configuration, "the endpoint does not speak S3: HTTP \(failure.status), \(failure.message)")
                }
                return (.uploadFailed, failure.description)
            }
        case .transfer(let failure):
            switch failure.kind {
            case .dnsFailure:
                return (.configuration, "the endpoint's host cannot be resolved: \(failure.message); check --endpoint")
            case .malformedURL:
                return (.configuration, "the endpoint URL is not valid: \(failure.message)")
            case .tlsFailure:
                return (.configuration, "TLS failed: \(failure.message); for a private CA pass --ca-bundle FILE")
            case .connectionRefused:
                return (.uploadFailed, "the endpoint refused the connection: \(failure.message)")
            default:
                return (.uploadFailed, failure.message)
            }
        case .unexpectedResponse(let text):
            return (.configuration, "the endpoint does not answer like S3: \(text)")
        }
    }
}

extension Diagnosis {
    /// The same failure met by a file the run found or took (a folder's file, a queued job)
    /// rather than one the command line named: an unreadable file or a FIFO there failed as an
    /// upload (exit 1, like any other file of the folder); exit 2 is for what the user typed.
    public var ofFileFound: Diagnosis {
        status == .badInput ? Diagnosis(status: .uploadFailed, message: message) : self
    }
}

/// Whether trying again can help.
public enum RetryClass: String, Sendable, Equatable {
    case retryable, permanent
}

/// A failure reduced to what the retry rules need (DESIGN §5).
public enum FailureKind: Sendable, Equatable {
    case connectionRefused, connectionReset, timeout, dnsFailure, tlsFailure
    case httpStatus(Int, code: String)
    case fileVanished, fileUnreadable, fileChanged, invalidInput
    /// The key holds an object the upload must not replace (a 412 PreconditionFailed, or the
    /// store's or a HEAD's refusal): never retried, never overwritten.
    case keyConflict
    case cancelled
    /// Another process held the database past the busy timeout: worth another try.
    case storeBusy
    /// Any other store failure: the database, not the file, is the problem.
    case store
    case other(String)

    /// DESIGN §5 and PEERS §3 item 14: network trouble, 5xx, 429, SlowDown, RequestTimeout,
    /// a skewed clock (after correction) and BadDigest (bytes damaged in transit) are worth
    /// another try; auth failures, a missing bucket and bad input are not.
    public var retryClass: RetryClass {
        switch self {
        case .connectionRefused, .connectionReset, .timeout:
            return .retryable
        case .dnsFailure, .tlsFailure, .fileVanished, .fileUnreadable, .invalidInput, .cancelled, .other, .store,
            .keyConflict:
            return .permanent
        case .fileChanged, .storeBusy:
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


extension UploadError {
    /// The failure kind the retry rules look at.
    public var failureKind: FailureKind {
        switch self {
        case .fileNotFound, .fileDeleted: return .fileVanished
        case .notARegularFile, .invalidPartSize, .fileTooLarge, .invalidKey: return .invalidInput
        case .fileUnreadable: return .fileUnreadable
        case .fileChanged: return .fileChanged
        case .verificationFailed(_, let reason): return .other(reason)
        case .s3(let error): return error.failureKind
        case .store(let error): return error.failureKind
        case .keyConflict: return .keyConflict
        }
    }
}

extension StoreError {
    public var failureKind: FailureKind {
        if case .busy = self { return .storeBusy }
        return .store
    }
}

extension FailureKind {
    /// The kind of any error r2up raises.
    public init(_ error: any Error) {
        switch error {
        case let error as UploadError: self = error.failureKind
        case let error as S3ClientError: self = error.failureKind
        case let error as StoreError: self = error.failureKind
        case is KeyConflict: self = .keyConflict
        case is CancellationError: self = .cancelled
        default: self = .other(String(describing: error))
        }
    }
}

/// Whether a failure is about one file (the job fails, the run goes on) or about the run
/// itself (credentials, signature, bucket, endpoint not S3, clock, the store): then every
/// other file would fail the same way, so the run stops at once and the jobs stay queued.
public enum FailureScope: Sendable, Equatable {
    case file, run
}

/// One failure, classified once: what the retry rules see, whether it stops the run, and
/// the line the user reads with its exit code.
public struct Failure: Sendable, Equatable {
    public var kind: FailureKind
    public var scope: FailureScope
    public var diagnosis: Diagnosis

    public init(kind: FailureKind, scope: FailureScope, diagnosis: Diagnosis) {
        self.kind = kind
        self.scope = scope
        self.diagnosis = diagnosis
    }

    /// Classifies `error`; `subject` (the file) starts a per-file message.
    public init(_ error: any Error, subject: String?) {
        self.init(error, diagnosis: Diagnosis(error, subject: subject))
    }

    /// Classifies `error` explained as `diagnosis` (one looked into further, e.g. with the server).
    /// A failure is met by a run's job, a file the run took: see `Diagnosis.ofFileFound`.
    public init(_ error: any Error, diagnosis: Diagnosis) {
        kind = FailureKind(error)
        switch (kind, diagnosis.status) {
        case (.storeBusy, _), (.cancelled, _): scope = .file
        case (_, .configuration), (_, .storeFailure): scope = .run
        default: scope = .file
        }
        self.diagnosis = scope == .file ? diagnosis.ofFileFound : diagnosis
    }

    /// Aggregates the exit status of a run: the most serious status wins (a configuration
    /// problem outranks per-file failures, an interruption outranks everything).
    public static func runStatus(_ statuses: some Sequence<ExitStatus>) -> ExitStatus {
        statuses.reduce(.success, max)
    }
}

extension ExitStatus: Comparable {
    /// The more serious status is the greater: `max` of a run's statuses is what it exits with.
    public static func < (lhs: ExitStatus, rhs: ExitStatus) -> Bool { lhs.severity < rhs.severity }

    var severity: Int {
        switch self {
        case .success: 0
        case .uploadFailed: 1
        case .badInput: 2
        case .locked: 3
        case .configuration: 4
        case .storeFailure: 5
        case .interrupted: 6
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
