public import Foundation

/// DESIGN §5's job state machine as a value: events go in, the action to take comes out.
///
/// It does no I/O and reads no clock; the driver performs each action and reports what
/// happened. An event that makes no sense in the current state changes nothing and
/// returns `.rejected`, so a confused caller gets an answer instead of a crash.
public struct UploadJobMachine: Sendable {
    /// The current state.
    public private(set) var state: UploadJobState
    /// The multipart upload id, once CreateMultipartUpload answered.
    public private(set) var uploadID: String?
    /// Failed tries since the job was queued (or requeued), over all runs.
    public private(set) var attempts: Int
    /// Failed tries in this run since the job last made progress.
    public private(set) var attemptsThisRun = 0
    /// When a later run may try again after a retryable failure.
    public private(set) var nextAttemptAt: Date?
    /// The most recent failure since the last progress.
    public private(set) var lastFailure: FailureKind?
    /// How many times in a row `lastFailure` happened.
    public private(set) var failureStreak = 0
    /// The retry rules.
    public let policy: JobRetryPolicy

    /// Resumes a job from what the store holds.
    ///
    /// `initiated` without an upload id cannot resume anything, so it starts as `staged`.
    public init(
        state: UploadJobState = .staged, uploadID: String? = nil, attempts: Int = 0, nextAttemptAt: Date? = nil,
        policy: JobRetryPolicy = JobRetryPolicy()
    ) {
        self.state = state == .initiated && uploadID == nil ? .staged : state
        self.uploadID = uploadID
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.policy = policy
    }

    /// A run picks the job up: a fresh job begins, an initiated or retryable one resumes.
    /// - Parameter multipart: whether the file goes in parts (it is above the threshold).
    public mutating func start(multipart: Bool) -> UploadJobAction {
        switch state {
        case .staged:
            return begin(multipart: multipart)
        case .initiated, .failedRetryable:
            guard let uploadID else { return begin(multipart: multipart) }
            // A job with parts on the server cannot turn into a single PUT.
            guard multipart else { return reject(.start) }
            state = .uploading
            nextAttemptAt = nil
            return .uploadParts(uploadID: uploadID, listParts: true)
        case .uploading, .verifying, .completed, .failedPermanent:
            return reject(.start)
        }
    }

    /// CreateMultipartUpload answered with an upload id.
    public mutating func initiated(uploadID: String) -> UploadJobAction {
        guard state == .staged else { return reject(.initiated) }
        state = .initiated
        self.uploadID = uploadID
        return .uploadParts(uploadID: uploadID, listParts: false)
    }

    /// A resume found nothing to build on (the upload is gone, or its parts no longer fit the
    /// file) and begins a new multipart upload: back to staged, then `initiated` again.
    public mutating func resumeFailed() -> UploadJobAction {
        guard state == .uploading, uploadID != nil else { return reject(.resumeFailed) }
        return restage()
    }

    /// One part reached the server.
    public mutating func partFinished() -> UploadJobAction {
        guard state == .initiated || state == .uploading, uploadID != nil else { return reject(.partFinished) }
        state = .uploading
        madeProgress()
        return .recordPart
    }

    /// The whole body reached the server: the single PUT answered, or every part did.
    public mutating func bodySent() -> UploadJobAction {
        guard state == .uploading else { return reject(.bodySent) }
        state = .verifying
        // Not progress that a retry keeps (a single PUT's retry sends the body again): counting
        // it would let a check that always fails retry forever.
        if let uploadID { return .completeMultipartUpload(uploadID: uploadID) }
        return .verifyObject
    }

    /// HEAD found the object with the expected size (and ETag where it can be checked).
    public mutating func verified() -> UploadJobAction {
        guard state == .verifying else { return reject(.verified) }
        state = .completed
        nextAttemptAt = nil
        madeProgress()
        return .publish
    }

    /// A step failed.
    /// - Parameters:
    ///   - kind: what went wrong.
    ///   - now: the current time, from which `nextAttemptAt` is set.
    public mutating func failed(_ kind: FailureKind, now: Date) -> UploadJobAction {
        guard state.isActive else { return reject(.failed) }
        switch kind {
        case .cancelled:
            return interrupted()
        case .fileChanged:
            return restage()
        default:
            break
        }
        let duringUploadPart = state == .uploading && uploadID != nil
        attempts += 1
        attemptsThisRun += 1
        failureStreak = lastFailure == kind ? failureStreak + 1 : 1
        lastFailure = kind
        if case .httpStatus(_, "NoSuchUpload") = kind, uploadID != nil, failureStreak == 1 {
            // The upload expired or was aborted (R2 aborts after 7 days): start it over once.
            uploadID = nil
            state = .staged
            return .restage(abortUploadID: nil)
        }
        let decision = policy.decide(
            kind, streak: failureStreak, attempts: attempts, attemptsThisRun: attemptsThisRun,
            duringUploadPart: duringUploadPart, now: now)
        switch decision {
        case .retry(let delay):
            state = .failedRetryable
            nextAttemptAt = now.addingTimeInterval(delay.timeInterval)
            return .retry(after: delay)
        case .giveUp(let date):
            state = .failedRetryable
            nextAttemptAt = date
            return .giveUp(nextAttemptAt: date)
        case .permanent:
            let abandoned = uploadID
            uploadID = nil
            state = .failedPermanent
            nextAttemptAt = nil
            return .failPermanently(abortUploadID: abandoned)
        }
    }

    /// The run working on the job stopped (Ctrl-C, a failure of the whole run) or died (its
    /// lease was found dead): interrupted, not failed. The job goes back to where the next
    /// run resumes it, its multipart upload and parts kept.
    public mutating func interrupted() -> UploadJobAction {
        guard state.isActive else { return reject(.interrupted) }
        state = uploadID == nil ? .staged : .initiated
        return .suspend
    }

    /// `r2up retry`: a failed job goes back in the queue with its attempts forgotten.
    public mutating func requeue() -> UploadJobAction {
        guard state.isFailed else { return reject(.requeue) }
        state = uploadID == nil ? .staged : .initiated
        attempts = 0
        attemptsThisRun = 0
        nextAttemptAt = nil
        lastFailure = nil
        failureStreak = 0
        return .requeued
    }

    /// The file's size or mtime moved since the job was queued: never publish it torn.
    public mutating func fileChanged() -> UploadJobAction {
        guard state.isActive || state.isFailed else { return reject(.fileChanged) }
        return restage()
    }

    private mutating func begin(multipart: Bool) -> UploadJobAction {
        nextAttemptAt = nil
        if multipart {
            state = .staged
            return .createMultipartUpload
        }
        state = .uploading
        return .putObject
    }

    private mutating func restage() -> UploadJobAction {
        let abandoned = uploadID
        uploadID = nil
        state = .staged
        nextAttemptAt = nil
        lastFailure = nil
        failureStreak = 0
        return .restage(abortUploadID: abandoned)
    }

    private mutating func madeProgress() {
        attemptsThisRun = 0
        lastFailure = nil
        failureStreak = 0
    }

    private func reject(_ event: UploadJobEvent) -> UploadJobAction {
        .rejected(state: state, event: event)
    }
}
