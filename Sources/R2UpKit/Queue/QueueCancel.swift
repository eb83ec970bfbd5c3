import Foundation
import R2UpModel
package import R2UpStore

/// What `queue cancel` chose and did, as values the CLI words.
package struct QueueCancellation: Sendable {
    /// The keys of the jobs dropped.
    package var cancelled: [String] = []
    /// Jobs a live process is uploading, left to it: their keys and that process's id.
    package var held: [(key: String, pid: Int32)] = []
    /// Dropped jobs had multipart uploads begun (to abort now, or on the next run).
    package var abandonedMultipart = false
}

/// Which jobs `queue cancel` takes.
package enum QueueCancelChoice: Sendable {
    /// These ids (or unique prefixes of them).
    case ids([String])
    /// Every failed job.
    case failed
    /// Every job not completed.
    case all
}

extension LocalStore {
    /// Drops the chosen jobs in one transaction; nothing chosen gives an empty cancellation.
    package func cancelJobs(_ choice: QueueCancelChoice) throws -> QueueCancellation {
        let states: [UploadJobState]
        if case .failed = choice { states = [.failedRetryable, .failedPermanent] } else {
            states = UploadJobState.allCases.filter { $0 != .completed }
        }
        let candidates = try store.jobs(in: states)
        let chosen: [UUID]
        if case .ids(let texts) = choice {
            chosen = try JobSelection.match(texts, in: candidates, what: "queued upload")
        } else {
            chosen = candidates.map(\.id)
        }
        guard !chosen.isEmpty else { return QueueCancellation() }
        let done = try store.cancelJobs(chosen)
        return QueueCancellation(
            cancelled: done.cancelled.map(\.key), held: done.held.map { (key: $0.job.key, pid: $0.pid) },
            abandonedMultipart: done.cancelled.contains { $0.uploadID != nil })
    }

    /// Aborts the multipart uploads cancelled jobs left; returns how many are left for the next run.
    package func abortAbandonedUploads(service: UploadService) async -> Int {
        await UploadQueue(store: store, service: service).abortAbandonedUploads()
    }
}

/// A queued job as the commands name it.
package struct QueuedFile: Sendable, Equatable {
    /// The file the job sends.
    package var path: String
    package var key: String
    /// The file's size when queued.
    package var size: Int64
}

extension UploadJob {
    /// What the commands print of the job.
    package var queuedFile: QueuedFile { QueuedFile(path: path, key: key, size: length) }
}
