package import Foundation
package import R2UpStore
import R2UpModel

/// What `r2up retry` takes: failed and interrupted uploads (all, or the ids given) and, with
/// all, failed downloads of the bucket. A failed download of a track r2up uploaded or offloaded
/// is a fetch (`fetches`: brought back against what was recorded at upload, as `r2up fetch`
/// does); one a pull made is a pull (`downloads`: the object now at its key, with pull's checks).
package struct RetryPlan: Sendable {
    package var uploads: [UUID]
    package var downloads: [TrackRecord]
    /// Failed fetches whose file is gone: fetched again.
    package var fetches: [StoredTrack] = []
    /// Failed fetches whose path holds a file now: never fetched over.
    package var onDisk: [String] = []

    package var isEmpty: Bool { uploads.isEmpty && downloads.isEmpty && fetches.isEmpty && onDisk.isEmpty }

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
            let fetched = try store.failedFetches(bucket: bucket)
            let paths = Set(fetched.map(\.track.path))
            downloads = try store.failedDownloads().filter { $0.bucket == bucket && !paths.contains($0.path) }
            for stored in fetched {
                var info = stat()
                if lstat(stored.track.path, &info) == 0 { onDisk.append(stored.track.path) } else { fetches.append(stored) }
            }
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
