package import Foundation
package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// What happened to one job in a run, in the order things happen.
package enum QueueEvent: Sendable {
    /// The job is in this run's hands (given to `run`, or queued by its feed); it starts in turn.
    case queued(UploadJob)
    case started(UploadJob)
    case completed(UploadJob, UploadItem, UploadOutcome)
    case failed(UploadJob, Diagnosis, nextAttemptAt: Date?)
}

/// The end of a run.
package struct QueueRunSummary: Sendable {
    package var completed: [UploadItem] = []
    package var failed: [(job: UploadJob, diagnosis: Diagnosis)] = []
    package var bytesSent: Int64 = 0
    /// Jobs `admit` turned away at their start; they stay queued for a later run.
    package var deferred: [UploadJob] = []
    /// Jobs another live process is uploading; left to it.
    package var heldElsewhere: [(job: UploadJob, pid: Int32)] = []
    /// The failure that stopped the whole run (credentials, bucket, endpoint, clock, store).
    package var stoppedBy: Failure?
    /// Whether the run was cancelled (Ctrl-C, SIGTERM).
    package var interrupted = false
    /// Jobs left queued because the run stopped or was interrupted; the next run resumes them.
    package var leftResumable = 0

    /// The run's outcome, aggregated from what happened (the most serious wins); a job
    /// left to another process is not a failure of this run.
    package var category: FailureCategory {
        var statuses = failed.map(\.diagnosis.category)
        if let stoppedBy { statuses.append(stoppedBy.diagnosis.category) }
        if interrupted { statuses.append(.interrupted) }
        return Failure.runCategory(statuses)
    }
}

/// The one line a run that did not finish ends with: why it stopped, or that it was
/// interrupted and what the next run resumes. nil for a run that finished.
package enum RunEnding {
    /// - Parameters:
    ///   - stoppedBy: why the run stopped early (its line), or nil.
    ///   - interrupted: whether Ctrl-C or SIGTERM ended it.
    ///   - leftResumable: the uploads left for the next run.
    ///   - resume: what takes the rest, e.g. "run the same command again".
    /// - Returns: the line, or nil for a run that finished.
    package static func line(stoppedBy: String?, interrupted: Bool, leftResumable: Int, resume: String) -> String? {
        // A stop is one line: its jobs stay queued, as `r2up queue` and a summary show.
        if let stoppedBy { return stoppedBy }
        guard interrupted else { return nil }
        let left = leftResumable == 1 ? "1 upload is" : "\(leftResumable) uploads are"
        return "interrupted; \(left) left to resume: \(resume)"
    }
}
