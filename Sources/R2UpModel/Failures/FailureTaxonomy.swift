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
    /// Each layer's error explains itself (`ClassifiedError`, declared beside the error).
    public init(_ error: any Error, subject: String? = nil) {
        let prefix = subject.map { "\($0): " } ?? ""
        switch error {
        case let error as any ClassifiedError:
            self = error.diagnosis(subject: subject)
        case is CancellationError:
            self.init(status: .interrupted, message: "interrupted")
        default:
            self.init(status: .uploadFailed, message: prefix + String(describing: error))
        }
    }

    /// A line for `subject`'s failure: a configuration problem is the run's, so it has no subject.
    public init(status: ExitStatus, message: String, subject: String?) {
        let prefix = subject.map { "\($0): " } ?? ""
        self.init(status: status, message: status == .configuration ? message : prefix + message)
    }
}

/// An error a layer raises, classified by that layer (the model cannot name its types): the
/// kind the retry rules see and the line the user reads. Declared beside each error type.
public protocol ClassifiedError: Error {
    /// The failure kind the retry rules look at.
    var failureKind: FailureKind { get }
    /// The line and exit status; `subject` (a file or key) starts the line when given.
    func diagnosis(subject: String?) -> Diagnosis
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
    /// A reply missing what S3 always sends (a 2xx without its ETag, XML cut short or not XML):
    /// from a real server most often one damaged reply, so the request is tried again a few
    /// times (`RequestRetryPolicy.maxMalformedReplyAttempts`) before it counts as the endpoint's.
    case malformedReply(String)
    case other(String)

    /// DESIGN §5 and PEERS §3 item 14: network trouble, 5xx, 429, SlowDown, RequestTimeout,
    /// a skewed clock (after correction) and BadDigest (bytes damaged in transit) are worth
    /// another try; auth failures, a missing bucket and bad input are not.
    public var retryClass: RetryClass {
        switch self {
        case .connectionRefused, .connectionReset, .timeout, .malformedReply:
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


extension FailureKind {
    /// The kind of any error r2up raises.
    public init(_ error: any Error) {
        switch error {
        case let error as any ClassifiedError: self = error.failureKind
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

extension ConfigurationError: ClassifiedError {
    public var failureKind: FailureKind { .other(description) }

    public func diagnosis(subject: String?) -> Diagnosis {
        Diagnosis(status: .configuration, message: description)
    }
}

extension KeyConflict: ClassifiedError {
    public var failureKind: FailureKind { .keyConflict }

    public func diagnosis(subject: String?) -> Diagnosis {
        Diagnosis(status: .uploadFailed, message: (subject.map { "\($0): " } ?? "") + String(describing: self))
    }
}

/// The store's failure as a layer below it carries it (the transfer layer's upload journal
/// records through the store but cannot name `StoreError`): classified where it was raised.
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible, ClassifiedError {
    /// `.storeBusy` or `.store`.
    public var failureKind: FailureKind
    public var description: String

    public init(failureKind: FailureKind, description: String) {
        self.failureKind = failureKind
        self.description = description
    }

    public func diagnosis(subject: String?) -> Diagnosis {
        // The database, not the file being handled: its description names the path.
        Diagnosis(status: .storeFailure, message: description)
    }
}
