public import Foundation

/// DESIGN §5's job state machine as a value: events go in, the answer comes out.
///
/// It does no I/O and reads no clock. Events that choose what happens next (a start, a
/// failure, an interruption, a requeue, a changed file) answer an `UploadJobAction` the driver
/// performs; events the transfer layer sequences itself (an upload id, a part, the body sent,
/// the check passed) answer an `UploadJobTransition`: the state entered, which the driver
/// stores. An event that makes no sense in the current state changes nothing and answers
/// `.rejected`, so a confused caller gets an answer instead of a crash; the driver stops on it.
public struct UploadJobMachine: Sendable {
    /// The current state.
    public private(set) var state: UploadJobState
    /// The multipart upload id, once CreateMultipartUpload answered.
    public private(set) var uploadID: String?
    /// Failed tries since the job was queued (or requeued), over all runs.
    public private(set) var attempts: Int
    /// Failed tries in this run since the job last made progress.
    public private(set) var attemptsThisRun = 0
    /// Failures in this run after the whole body was sent (completing or checking the object).
    /// Sending parts again counts as progress, so without this a check that can never succeed
    /// (a server whose HEAD has no ETag) started the upload over forever (issue 28).
    public private(set) var verifyFailuresThisRun = 0
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

    /// CreateMultipartUpload answered with an upload id: the parts go next.
    public mutating func initiated(uploadID: String) -> UploadJobTransition {
        guard state == .staged else { return refuse(.initiated) }
        state = .initiated
        self.uploadID = uploadID
        return .entered(state)
    }

    /// A resume found nothing to build on (the upload is gone, or its parts no longer fit the
    /// file; the transfer layer aborted what was left) and begins a new multipart upload: back
    /// to staged, then `initiated` again.
    public mutating func resumeFailed() -> UploadJobTransition {
        guard state == .uploading, uploadID != nil else { return refuse(.resumeFailed) }
        clearUpload()  // its abort is the transfer layer's, done already
        return .entered(state)
    }

    /// One part reached the server: it is recorded before the upload is completed.
    public mutating func partFinished() -> UploadJobTransition {
        guard state == .initiated || state == .uploading, uploadID != nil else { return refuse(.partFinished) }
        state = .uploading
        madeProgress()
        return .entered(state)
    }

    /// The whole body reached the server: the single PUT answered, or every part did.
    /// Completing (multipart) and checking the object come next.
    /// A single PUT sent again while verifying (its check found the stored object wrong, and
    /// the transfer layer uploads once more before the job fails) stays verifying.
    public mutating func bodySent() -> UploadJobTransition {
        let resent = state == .verifying && uploadID == nil
        guard state == .uploading || resent else { return refuse(.bodySent) }
        state = .verifying
        // Not progress that a retry keeps (a single PUT's retry sends the body again): counting
        // it would let a check that always fails retry forever.
        return .entered(state)
    }

    /// HEAD found the object with the expected size (and ETag where it can be checked): the
    /// upload is published (history row, track uploaded, job completed, in one transaction).
    public mutating func verified() -> UploadJobTransition {
        guard state == .verifying else { return refuse(.verified) }
        state = .completed
        nextAttemptAt = nil
        madeProgress()
        return .entered(state)
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
        if state == .verifying { verifyFailuresThisRun += 1 }
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
            kind, streak: failureStreak, attempts: attempts, attemptsThisRun: max(attemptsThisRun, verifyFailuresThisRun),
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
        verifyFailuresThisRun = 0
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
        clearUpload()
        return .restage(abortUploadID: abandoned)
    }

    /// Back to staged with no upload: nothing sent counts any more.
    private mutating func clearUpload() {
        uploadID = nil
        state = .staged
        nextAttemptAt = nil
        lastFailure = nil
        failureStreak = 0
    }

    private mutating func madeProgress() {
        attemptsThisRun = 0
        lastFailure = nil
        failureStreak = 0
    }

    private func reject(_ event: UploadJobEvent) -> UploadJobAction {
        .rejected(state: state, event: event)
    }

    private func refuse(_ event: UploadJobEvent) -> UploadJobTransition {
        .rejected(state: state, event: event)
    }
}
