public import Foundation

/// Where a durable upload job stands (DESIGN §5, after seed 003); stored as text in `jobs.state`.
///
/// ```
/// staged → initiated (CreateMultipartUpload; a single PUT skips it) → uploading
///        → verifying (Complete + HEAD) → completed
/// any active state → failedRetryable | failedPermanent
/// ```
public enum UploadJobState: String, Codable, Sendable, CaseIterable {
    /// The file is known and ready; nothing is on the server yet.
    case staged
    /// A multipart upload exists (its id is stored); parts may be on the server.
    case initiated
    /// Bytes are being sent.
    case uploading
    /// The body is sent; completing and checking the object with HEAD.
    case verifying
    /// The object is on the server, checked, and in the history.
    case completed
    /// Failed in a way another try can fix; `nextAttemptAt` says when.
    case failedRetryable
    /// Failed in a way only a person can fix; waits for `r2up retry`.
    case failedPermanent

    /// States in which a run is working on the job and a failure can be reported.
    public var isActive: Bool {
        switch self {
        case .staged, .initiated, .uploading, .verifying: true
        case .completed, .failedRetryable, .failedPermanent: false
        }
    }

    /// Failed, either way.
    public var isFailed: Bool { self == .failedRetryable || self == .failedPermanent }

    /// Sending or checking: what only a live run can be doing (its lease says whether one is).
    public var isInFlight: Bool { self == .uploading || self == .verifying }

    /// The upload state the job gives its track (seed 000): the one rule, used by the driver,
    /// the store and the session alike. A job a run holds shows uploading until the run's last
    /// word on it (even staged before CreateMultipartUpload, or waiting for a retry in the run);
    /// otherwise a copy leaves the track uploaded (its object stays at its key until the copy
    /// lands), in flight is uploading, failed is an error, completed is uploaded, and queued or
    /// interrupted is not uploaded (yet).
    /// - Parameters:
    ///   - heldByRun: whether a run is working on the job now (started, not yet completed,
    ///     given up, failed for good, interrupted or set aside).
    ///   - copying: whether the job copies the track's object to a new key (a move, or another
    ///     prefix) rather than sending the file.
    public func trackState(heldByRun: Bool = false, copying: Bool = false) -> UploadState {
        switch self {
        case .completed: .uploaded
        case _ where heldByRun: .uploading
        case _ where copying: .uploaded
        case .uploading, .verifying: .uploading
        case .failedRetryable, .failedPermanent: .error
        case .staged, .initiated: .none
        }
    }
}

/// The events `UploadJobMachine` accepts, named for rejected transitions and logs.
public enum UploadJobEvent: String, Sendable, CaseIterable {
    case start, initiated, resumeFailed, partFinished, bodySent, verified, failed, interrupted, requeue, fileChanged
}

/// The answer to an event the transfer layer sequences itself (`initiated`, `partFinished`,
/// `bodySent`, `verified`, `resumeFailed`): the state the job entered, which the driver stores
/// as it is, or a refusal, on which the driver stops the upload.
public enum UploadJobTransition: Sendable, Equatable {
    /// The job is now in this state.
    case entered(UploadJobState)
    /// The event makes no sense in this state; nothing changed.
    case rejected(state: UploadJobState, event: UploadJobEvent)
}

/// What the driver must do after an event that decides the next step.
public enum UploadJobAction: Sendable, Equatable {
    /// Send CreateMultipartUpload, then report `initiated(uploadID:)`.
    case createMultipartUpload
    /// Send the whole file in one PUT, then report `bodySent()`.
    case putObject
    /// Send the parts not yet recorded; with `listParts`, reconcile with ListParts first (a resume).
    case uploadParts(uploadID: String, listParts: Bool)
    /// Try again in this run after the delay.
    case retry(after: Duration)
    /// Stop for this run; a later run may try from `nextAttemptAt`.
    case giveUp(nextAttemptAt: Date)
    /// Stop until `r2up retry`; abort the multipart upload when there is one.
    case failPermanently(abortUploadID: String?)
    /// Start again from the file: clear the parts, abort the old upload when there is one.
    case restage(abortUploadID: String?)
    /// Interrupted (cancelled): leave the job as it is for the next run.
    case suspend
    /// Back in the queue with a fresh attempt count.
    case requeued
    /// The event makes no sense in this state; nothing changed.
    case rejected(state: UploadJobState, event: UploadJobEvent)
}
