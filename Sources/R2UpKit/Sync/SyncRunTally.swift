import Foundation
import Synchronization
import R2UpModel
import R2UpStore
import R2UpTransfer

/// What a sync's intake did with the files it queued while the run went: the jobs that wait
/// (counted once the run is over) and the files it refused.
final class SyncQueued: Sendable {
    private let waitingJobs: Mutex<[(job: UploadJob, disposition: JobDisposition)]>
    private let refusedFiles = Mutex<[(SyncFailure, FailureCategory)]>([])

    init(waiting: [(job: UploadJob, disposition: JobDisposition)]) {
        waitingJobs = Mutex(waiting)
    }

    var waiting: [(job: UploadJob, disposition: JobDisposition)] { waitingJobs.withLock { $0 } }
    var refused: [(SyncFailure, FailureCategory)] { refusedFiles.withLock { $0 } }

    func take(_ request: PushRequest, _ result: Result<EnqueueResult, any Error>) {
        switch result {
        case .success(let outcome):
            waitingJobs.withLock { $0.append((outcome.job, outcome.disposition)) }
        case .failure(let error):
            let diagnosis = Diagnosis(error).ofFileFound
            let failure = SyncFailure(path: request.path, key: request.key, error: diagnosis.message)
            refusedFiles.withLock { $0.append((failure, diagnosis.category)) }
        }
    }
}

/// A sync run's events as they come (on the transfer or store thread: short locks only),
/// tallied as a summary; `--delete-after` removes a file here once its upload is verified.
final class SyncRunTally: Sendable {
    private let tally = Mutex(SyncSummary())
    private let deleteAfter: Bool

    init(deleteAfter: Bool) {
        self.deleteAfter = deleteAfter
    }

    var value: SyncSummary { tally.withLock { $0 } }

    func take(_ event: QueueEvent) {
        switch event {
        case .queued, .started:
            break
        case .completed(let job, let item, _):
            // Completed means the upload was verified; and the file must still be what was sent.
            let deleted = deleteAfter && SyncRunner.isAsQueued(job) && unlink(job.path) == 0
            tally.withLock {
                if let source = item.copiedFrom {
                    $0.copied += 1
                    $0.copiedFrom.append(source)
                } else {
                    $0.uploaded += 1
                    $0.uploadedBytes += item.fileSize
                }
                if deleted { $0.deleted += 1 }
            }
        case .failed(let job, _, _) where job.state == .staged:
            // Changed under its upload: not published, staged again for the next run.
            tally.withLock {
                $0.waiting += 1
                $0.retryPaths.append(job.path)
            }
        case .failed(let job, let diagnosis, let next):
            if let next { tally.withLock { $0.retryAt[job.path] = next } }
            // The failure already names the file: keep the message alone.
            let message = diagnosis.message.hasPrefix(job.path + ": ")
                ? String(diagnosis.message.dropFirst(job.path.count + 2)) : diagnosis.message
            tally.withLock { $0.fail(SyncFailure(path: job.path, key: job.key, error: message), category: diagnosis.category) }
        }
    }
}

extension SyncSummary {
    /// Adds what a pass's run did (its events' `tally`, and the queue's summary of the run).
    mutating func take(_ done: SyncSummary, run result: QueueRunSummary) {
        uploaded += done.uploaded
        copied += done.copied
        uploadedBytes += done.uploadedBytes
        deleted += done.deleted
        waiting += done.waiting
        retryPaths += done.retryPaths + result.deferred.map(\.path)
        retryAt.merge(done.retryAt) { min($0, $1) }
        failures += done.failures
        heldElsewhere += result.heldElsewhere.count
        stoppedBy = result.stoppedBy?.diagnosis.message
        interrupted = result.interrupted
        leftResumable = result.leftResumable
        // A file that changed under its upload is staged again and counted waiting, as one still
        // being written is: not a failure of this run (its summary says 0 failed, so must its code).
        var settled = result
        settled.failed.removeAll { $0.job.state == .staged }
        raise(done.category)
        raise(settled.category)
    }
}
