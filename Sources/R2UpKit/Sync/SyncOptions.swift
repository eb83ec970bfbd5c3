public import R2UpModel
public import R2UpStore
public import R2UpTransfer

/// How a sync runs (`r2up sync`'s flags).
public struct SyncOptions: Sendable {
    /// Key prefix; normalised by `SyncPlan.normalizedPrefix`.
    public var prefix = ""
    public var filter = SyncFilter()
    /// Files changed more recently than this wait for the next run.
    public var minAge: Duration = .seconds(10)
    public var dryRun = false
    public var deleteAfter = false
    public var verifyRemote = false
    public var followSymlinks = false
    /// Wait for another sync on the same database instead of exiting 4.
    public var waitForLock = false
    public var attributes = ObjectAttributes()
    /// The tags of the files being uploaded, read ahead (`--tag-metadata`).
    var tagFeed: TagFeed?
    /// `--key-template`: keys from tags instead of paths.
    public var keyTemplate: KeyTemplate?
    /// Send the tags as `x-amz-meta-*` (`--no-tag-metadata` turns it off).
    public var tagMetadata = true
    /// Live byte counts of the uploads, for a progress display.
    public var progress: TransferProgress?
    /// `--overwrite` / `--no-clobber`: whether an upload may replace an object at its key.
    public var replace: ReplacePolicy = .guarded
    /// Each queued job and each upload event, as they happen (`r2up watch` prints them).
    public var onQueued: (@Sendable (UploadJob) -> Void)?
    public var onEvent: (@Sendable (QueueEvent) -> Void)?
    /// Asked as each job is about to start; false leaves it queued (a watch that is stopping).
    public var admitsMore: (@Sendable () -> Bool)?
    /// Which run holds the lock, for the message a second run gets.
    var lockHolder = "sync"
    /// A run's first pass lists the server for multipart uploads a killed run left (one request);
    /// a watch's later batches skip it.
    var abortsOrphans = true
    /// `--delete-moved`: a moved track's old object is deleted once its copy is verified.
    public var deleteMoved = false
    public var mirror = MirrorOptions()
    /// How jobs are retried: in the run, and when a later one may try (`nextAttemptAt`). A watch
    /// waits seconds, not minutes: it is the later run (`WatchOptions.retryPolicy`).
    var retryPolicy = UploadQueue.defaultPolicy

    public init() {}
}
