package import Foundation
package import R2UpStore
import R2UpModel

/// What `r2up retry` takes: failed and interrupted uploads (all, or the ids given) and, with
/// all, failed downloads of the bucket.
package struct RetryPlan: Sendable {
    package var uploads: [UUID]
    package var downloads: [TrackRecord]

    package var isEmpty: Bool { uploads.isEmpty && downloads.isEmpty }

    /// - Parameter ids: job ids or their first characters; nil takes everything.
    package init(store: Store, bucket: String, ids: [String]?) throws {
        let now = Date()
        let unfinished = try store.jobs(in: [.staged, .initiated, .uploading, .verifying])
        let interrupted = unfinished.filter { $0.isInterrupted(now: now) }
        let candidates = try store.failedJobs() + interrupted
        if let ids {
            uploads = try JobSelection.match(ids, in: candidates, what: "failed or interrupted upload")
            downloads = []
        } else {
            uploads = candidates.map(\.id)
            downloads = try store.failedDownloads().filter { $0.bucket == bucket }
        }
    }

    /// Puts the failed ones back in the queue (through their machines); returns the jobs to run.
    package func requeue(store: Store) throws(StoreError) -> [UploadJob] {
        try store.requeue(ids: uploads)
        var jobs: [UploadJob] = []
        for id in uploads {
            if let job = try store.job(id: id) { jobs.append(job) }
        }
        return jobs
    }
}
