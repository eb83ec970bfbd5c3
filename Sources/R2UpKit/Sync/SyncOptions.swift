package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// How a sync runs (`r2up sync`'s flags).
package struct SyncOptions: Sendable {
    /// Key prefix; normalised by `SyncPlan.normalizedPrefix`.
    package var prefix = ""
    package var filter = SyncFilter()
    /// Files changed more recently than this wait for the next run.
    package var minAge: Duration = .seconds(10)
    package var dryRun = false
    package var deleteAfter = false
    package var verifyRemote = false
    package var followSymlinks = false
    /// Wait for another sync on the same database instead of exiting 4.
    package var waitForLock = false
    package var attributes = ObjectAttributes()
    /// The tags of the files being uploaded, read ahead (`--tag-metadata`).
    var tagFeed: TagFeed?
    /// `--key-template`: keys from tags instead of paths.
    package var keyTemplate: KeyTemplate?
    /// Send the tags as `x-amz-meta-*` (`--no-tag-metadata` turns it off).
    package var tagMetadata = true
    /// Live byte counts of the uploads, for a progress display.
    package var progress: TransferProgress?
    /// `--overwrite` / `--no-clobber`: whether an upload may replace an object at its key.
    package var replace: ReplacePolicy = .guarded
    /// Each queued job and each upload event, as they happen (`r2up watch` prints them).
    package var onQueued: (@Sendable (UploadJob) -> Void)?
    package var onEvent: (@Sendable (QueueEvent) -> Void)?
    /// Asked as each job is about to start; false leaves it queued (a watch that is stopping).
    package var admitsMore: (@Sendable () -> Bool)?
    /// Which run holds the lock, for the message a second run gets.
    var lockHolder = "sync"
    /// A run's first pass lists the server for multipart uploads a killed run left (one request);
    /// a watch's later batches skip it.
    var abortsOrphans = true
    /// `--delete-moved`: a moved track's old object is deleted once its copy is verified.
    package var deleteMoved = false
    package var mirror = MirrorOptions()
    /// How jobs are retried: in the run, and when a later one may try (`nextAttemptAt`). A watch
    /// waits seconds, not minutes: it is the later run (`WatchOptions.retryPolicy`).
    var retryPolicy = UploadQueue.defaultPolicy

    package init() {}
}
