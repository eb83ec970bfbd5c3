import Foundation

// The failure taxonomy (DESIGN §5): every failure r2up meets — a transfer error, an S3
// status and code, a file-system error, a store error — is classified here, once, into
// what the retry rules see (`FailureKind`, its `RetryClass`), whether it is about one file
// or the whole run (`FailureScope`), and what the user reads in which category
// (`Diagnosis`, `FailureCategory`). push, sync, pull, retry and doctor all go through it.
// The exit code of each category is the CLI's (Sources/r2up/Presentation/ExitCodes.swift).

/// What kind of outcome a failure, or a whole run, is (DESIGN §3): the CLI exits with one
/// code per category, an app shows it as it likes. Ordered by seriousness (`Comparable`).
public enum FailureCategory: Sendable, CaseIterable {
    case success
    /// An upload, download or delete failed; the others are done.
    case uploadFailed
    /// Bad usage or input: nothing was sent.
    case badInput
    /// Settings, credentials or an endpoint that is not S3: the run stopped at once.
    case configuration
    /// Another r2up holds the lock, the file or the job.
    case locked
    /// The local store failed.
    case storeFailure
    /// Ctrl-C (SIGINT) or SIGTERM: what was left is resumable.
    case interrupted
}

/// An error as the user should see it: one line, and the category it falls in.
public struct Diagnosis: Sendable, Equatable {
    public var category: FailureCategory
    public var message: String

    public init(category: FailureCategory, message: String) {
        self.category = category
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
            self.init(category: .interrupted, message: "interrupted")
        default:
            self.init(category: .uploadFailed, message: prefix + String(describing: error))
        }
    }

    /// A line for `subject`'s failure: a configuration problem is the run's, so it has no subject.
    public init(category: FailureCategory, message: String, subject: String?) {
        let prefix = subject.map { "\($0): " } ?? ""
        self.init(category: category, message: category == .configuration ? message : prefix + message)
    }
}

/// An error a layer raises, classified by that layer (the model cannot name its types): the
/// kind the retry rules see and the line the user reads. Declared beside each error type.
public protocol ClassifiedError: Error {
    /// The failure kind the retry rules look at.
    var failureKind: FailureKind { get }
    /// The line and its category; `subject` (a file or key) starts the line when given.
    func diagnosis(subject: String?) -> Diagnosis
}

extension Diagnosis {
    /// The same failure met by a file the run found or took (a folder's file, a queued job)
    /// rather than one the command line named: an unreadable file or a FIFO there failed as an
    /// upload, like any other file of the folder; bad input is for what the user typed.
    public var ofFileFound: Diagnosis {
        category == .badInput ? Diagnosis(category: .uploadFailed, message: message) : self
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
    /// The server answered the write but the HEAD that checks it kept failing (a server
    /// restarting): the object is most likely there. Not tried again by a run (that would send
    /// the file again); a daemon's policy may (`JobRetryPolicy.retriesUnconfirmed`).
    case unconfirmed
    case other(String)

    /// DESIGN §5 and PEERS §3 item 14: network trouble, 5xx, 429, SlowDown, RequestTimeout,
    /// a skewed clock (after correction) and BadDigest (bytes damaged in transit) are worth
    /// another try; auth failures, a missing bucket and bad input are not.
    public var retryClass: RetryClass {
        switch self {
        case .connectionRefused, .connectionReset, .timeout, .malformedReply:
            return .retryable
        case .dnsFailure, .tlsFailure, .fileVanished, .fileUnreadable, .invalidInput, .cancelled, .other, .store,
            .keyConflict, .unconfirmed:
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
/// the line the user reads with its category.
public struct Failure: Sendable, Equatable {
    public var kind: FailureKind
    public var scope: FailureScope
    public var diagnosis: Diagnosis

    /// Classifies `error`; `subject` (the file) starts a per-file message.
    public init(_ error: any Error, subject: String?) {
        self.init(error, diagnosis: Diagnosis(error, subject: subject))
    }

    /// Classifies `error` explained as `diagnosis` (one looked into further, e.g. with the server).
    /// A failure is met by a run's job, a file the run took: see `Diagnosis.ofFileFound`.
    public init(_ error: any Error, diagnosis: Diagnosis) {
        kind = FailureKind(error)
        switch (kind, diagnosis.category) {
        case (.storeBusy, _), (.cancelled, _): scope = .file
        case (_, .configuration), (_, .storeFailure): scope = .run
        default: scope = .file
        }
        self.diagnosis = scope == .file ? diagnosis.ofFileFound : diagnosis
    }

    /// Aggregates the outcome of a run: the most serious category wins (a configuration
    /// problem outranks per-file failures, an interruption outranks everything).
    public static func runCategory(_ categories: some Sequence<FailureCategory>) -> FailureCategory {
        categories.reduce(.success, max)
    }
}

extension FailureCategory: Comparable {
    /// The more serious category is the greater: `max` of a run's categories is its outcome.
    public static func < (lhs: FailureCategory, rhs: FailureCategory) -> Bool { lhs.severity < rhs.severity }

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
        Diagnosis(category: .configuration, message: description)
    }
}

extension KeyConflict: ClassifiedError {
    public var failureKind: FailureKind { .keyConflict }

    public func diagnosis(subject: String?) -> Diagnosis {
        Diagnosis(category: .uploadFailed, message: (subject.map { "\($0): " } ?? "") + String(describing: self))
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
        Diagnosis(category: .storeFailure, message: description)
    }
}
