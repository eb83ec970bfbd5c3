import Foundation
import R2UpAudio
import Synchronization
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

/// `r2up sync DIR`: upload what is new or changed under a folder, through the durable queue.
public struct SyncRunner: Sendable {
    public let service: UploadService
    /// The database file; the lock file sits beside it.
    public let databasePath: String

    public init(service: UploadService, databasePath: String) {
        self.service = service
        self.databasePath = databasePath
    }

    /// Runs one sync of `folder`. Throws only what stops the whole run: the lock is held
    /// (`SyncError`), the store fails (`StoreError`), the listing fails (`S3ClientError`);
    /// a file that fails is in the summary's failures.
    public func run(_ folder: String, options: SyncOptions) async throws -> SyncSummary {
        let started = ContinuousClock.now
        try options.mirror.delete ? SyncError.checkFolderToMirror(folder, command: "sync") : SyncError.checkFolder(folder, command: "sync")
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path

        // A dry run changes nothing: no lock file, and no database made where none is.
        var lock: SyncLock?
        let store: Store?
        if options.dryRun {
            store = FileManager.default.fileExists(atPath: databasePath) ? try Store(path: databasePath) : nil
        } else {
            store = try Store(path: databasePath)
            let lockPath = SyncLock.path(forDatabase: databasePath)
            lock = options.waitForLock
                ? try await SyncLock.acquireWaiting(path: lockPath, holder: options.lockHolder)
                : try SyncLock.acquire(path: lockPath, holder: options.lockHolder)
        }
        defer { withExtendedLifetime(lock) {} }
        var summary = try await pass(root: root, store: store, options: options, started: started)
        try await settleStale(root: root, store: store, options: options, into: &summary)
        return summary
    }

    /// One pass over `root` (absolute, standardised) with the lock held: the whole folder, or
    /// only the files at `paths` (a watch's batch; each one absolute, under `root`).
    func pass(
        root: String, store: Store?, options: SyncOptions, only paths: [String]? = nil, started: ContinuousClock.Instant = .now
    ) async throws -> SyncSummary {
        let prefix = SyncPlan.normalizedPrefix(options.prefix)

        let remote = options.verifyRemote ? try await listing(prefix: prefix) : nil
        let nowNs = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        let minAge = options.minAge.components
        var plan = SyncPlan(
            prefix: prefix, bucket: service.bucket, filter: options.filter, remote: remote,
            minAgeNs: LocalFile.nanoseconds(timespec(tv_sec: Int(minAge.seconds), tv_nsec: Int(minAge.attoseconds / 1_000_000_000))),
            nowNs: nowNs)
        let tags = TagResolver(store: store)
        // A key template needs the tags of every file while the scan walks the store's tracks (no
        // lookup can run inside that read): load them all first. Otherwise only the files that
        // upload need theirs, looked up together by their feed (100,000 tracks' tags held for a
        // no-op sync took 170 MiB).
        if paths == nil && options.keyTemplate != nil { try tags.preload(under: root) }
        if let template = options.keyTemplate {
            let keyer = TemplateKeys(template: template, tags: tags)
            plan.keyFor = { file in
                let fileTags = AudioTagReader.isAudio(file.path) ? tags.tags(path: file.path, size: file.size, mtimeNs: file.mtimeNs) : nil
                return prefix + keyer.key(path: file.path, relativePath: file.relativePath, tags: .some(fileTags))
            }
        }
        let scanner = SyncScanner(followSymlinks: options.followSymlinks, skipHidden: options.filter.usesDefaultExcludes)
        // The scan and the store walk side by side in path order: memory stays flat at 100,000 files.
        var problems: [ScanProblem] = []
        var vanished: [VanishedTrack] = []
        if let paths {
            let files = WatchFiles.scanned(paths, under: root, scanner: scanner)
            let states = try store?.syncStates(at: files.map(\.path)) ?? Array(repeating: nil, count: files.count)
            for (file, state) in zip(files, states) { plan.add(file, track: state) }
        } else if let store {
            (problems, vanished) = try store.withSyncStates(under: root, bucket: service.bucket) { tracks in
                let problems = try scanner.scan(root) { file in plan.add(file, track: try tracks.state(at: file.path)) }
                try tracks.finish()
                return (problems, tracks.vanished)
            }
        } else {
            problems = scanner.scan(root) { plan.add($0, track: nil) }
        }
        plan.finish()
        if paths != nil, let store {
            // A watch's batch sees only its files: a new one may be an uploaded track that moved
            // (renamed, or its folder moved within the tree), so look for tracks gone from their paths.
            let sizes = Set(plan.uploads.filter { $0.reason == .new }.map(\.file.size))
            vanished = try store.vanishedTracks(under: root, bucket: service.bucket, sizes: sizes)
        }
        // Tracks that follow their files (moved, or another prefix or template) are copies, not uploads.
        let moved = try Intake.follow(plan.uploads, vanished: vanished, store: store, bucket: service.bucket)
        plan.uploads = moved.uploads

        var summary = SyncSummary()
        summary.dryRun = options.dryRun
        (summary.vanished, summary.movedTracks) = (vanished, moved.moves.map(\.track))
        summary.unchanged = plan.unchanged
        summary.waiting = plan.waiting.count
        summary.excluded = plan.filtered
        // A folder the scan could not read hid its files: the sync is not all done (the folder
        // named on the command line: bad input), unless an exclude leaves it out whole (lost+found).
        let filter = options.filter
        summary.problems = problems.filter { problem in
            guard problem.unreadFolder, problem.path.hasPrefix(root + "/") else { return true }
            return !filter.excludesFolder(ObjectKey.nfc(String(problem.path.dropFirst(root.count + 1))))
        }
        for status in summary.problems.compactMap({ $0.exitStatus(root: root) }) {
            summary.raise(status)
        }
        summary.failures = plan.rejected
        summary.cloudOnly = plan.cloudOnly.count
        summary.retryPaths = plan.waiting.map(\.path)

        if options.dryRun {
            summary.planned = plan.uploads.map {
                SyncPlannedFile(path: $0.file.path, key: $0.key, size: $0.file.size, reason: $0.reason)
            }
            summary.uploaded = plan.uploads.count
            summary.uploadedBytes = plan.uploads.reduce(0) { $0 + $1.file.size }
            summary.planned += moved.moves.map {
                SyncPlannedFile(path: $0.upload.file.path, key: $0.upload.key, size: $0.upload.file.size, reason: .moved, copyOf: $0.track.key)
            }
            summary.copied = moved.moves.count
        } else if let store {
            if !plan.cloudOnly.isEmpty {
                try store.recordCloudOnly(plan.cloudOnly.map { object in
                    (root + "/" + String(object.key.dropFirst(prefix.count)),
                     CloudCopy(bucket: service.bucket, key: object.key, etag: object.etag), object.size)
                })
            }
            var options = options
            // Tags of what is uploaded are read (or found unchanged) and stored whether or not they are sent.
            let tagged = tags.attributes(options.attributes, forPaths: plan.uploads.map(\.file.path))
            if options.tagMetadata { options.tagFeed = tagged.tagFeed }
            do { try await upload(plan.uploads, moves: moved.moves, store: store, options: options, into: &summary) } catch {
                try? await tags.save()
                throw error
            }
            try await tags.save()
        }
        summary.failures.sort { $0.path < $1.path }
        if summary.status == .success && !summary.failures.isEmpty { summary.status = .uploadFailed }

        summary.seconds = (ContinuousClock.now - started) / .seconds(1)
        summary.depth = service.uploader.slots.depthReport
        return summary
    }

    /// Every object under the prefix, by key (ListObjectsV2, 1,000 a page).
    private func listing(prefix: String) async throws -> [String: ObjectSummary] {
        var objects: [String: ObjectSummary] = [:]
        for object in try await service.client.listAllObjects(bucket: service.bucket, prefix: prefix).objects {
            objects[ObjectKey.nfc(object.key)] = object
        }
        return objects
    }

    private func upload(
        _ uploads: [PlannedUpload], moves: [PlannedMove], store: Store, options: SyncOptions, into summary: inout SyncSummary
    ) async throws {
        guard !uploads.isEmpty || !moves.isEmpty else { return }
        let intake = Intake(queue: UploadQueue(store: store, service: service, policy: options.retryPolicy))
        // The tracks that moved follow their files first: a move the store refuses is uploaded as usual.
        let movesQueued = try intake.enqueueMoves(
            moves, contentType: options.attributes.contentType, intent: .scheduled, replace: options.replace)
        summary.renamed = movesQueued.renamed
        for conflict in movesQueued.conflicts {
            summary.fail(SyncFailure(path: conflict.path, key: conflict.key, error: conflict.reason))
        }
        // Queued a commit at a time while the first files upload (`JobFeed`); what waits is counted after.
        let waiting = Mutex(movesQueued.waiting)
        let refused = Mutex<[(SyncFailure, FailureCategory)]>([])
        let attributes = ObjectAttributes(contentType: options.attributes.contentType)
        let requests = (uploads + movesQueued.uploads).map {
            PushRequest(scanned: $0.file, key: $0.key, attributes: attributes, unlessUploaded: $0.reason != .missingRemote)
        }
        let replace = options.replace
        let produce: @Sendable (JobFeed) async -> Void = { feed in
            await intake.enqueue(requests, intent: .scheduled, replace: replace, into: feed) { request, result in
                switch result {
                case .success(let outcome):
                    waiting.withLock { $0.append((outcome.job, outcome.disposition)) }
                case .failure(let error):
                    let diagnosis = Diagnosis(error).ofFileFound
                    let failure = SyncFailure(path: request.path, key: request.key, error: diagnosis.message)
                    refused.withLock { $0.append((failure, diagnosis.category)) }
                }
            }
        }

        let tally = Mutex(SyncSummary())
        let deleteAfter = options.deleteAfter
        let admitsMore = options.admitsMore
        let observer = options.onEvent
        let onQueued = options.onQueued
        let result = await intake.run(
            movesQueued.jobs, feeding: produce, abortsOrphans: options.abortsOrphans,
            attributes: RunAttributes(options.attributes, tagFeed: options.tagFeed), progress: options.progress,
            admit: { job in (admitsMore?() ?? true) && Self.isAsQueued(job) },
            onEvent: { event in
                defer { observer?(event) }
                switch event {
                case .queued(let job):
                    onQueued?(job)
                case .started:
                    break
                case .completed(let job, let item, _):
                    // Completed means the upload was verified; and the file must still be what was sent.
                    let deleted = deleteAfter && Self.isAsQueued(job) && unlink(job.path) == 0
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
                    tally.withLock { $0.fail(SyncFailure(path: job.path, key: job.key, error: message), status: diagnosis.category) }
                }
            })
        let done = tally.withLock { $0 }
        Self.count(waiting: waiting.withLock { $0 }, into: &summary)
        for (failure, status) in refused.withLock({ $0 }) { summary.fail(failure, status: status) }
        summary.uploaded += done.uploaded
        summary.copied += done.copied
        if options.deleteMoved { summary.movedDeleted = await deleteMoved(done.copiedFrom, store: store, into: &summary) }
        summary.uploadedBytes += done.uploadedBytes
        summary.deleted += done.deleted
        summary.waiting += done.waiting + (try await settleDeferred(result.deferred, store: store))
        summary.retryPaths += done.retryPaths + result.deferred.map(\.path)
        summary.retryAt.merge(done.retryAt) { min($0, $1) }
        summary.failures += done.failures
        summary.heldElsewhere += result.heldElsewhere.count
        summary.stoppedBy = result.stoppedBy?.diagnosis.message
        summary.interrupted = result.interrupted
        summary.leftResumable = result.leftResumable
        // A file that changed under its upload is staged again and counted waiting, as one still
        // being written is: not a failure of this run (its summary says 0 failed, so must its code).
        var settled = result
        settled.failed.removeAll { $0.job.state == .staged }
        summary.raise(done.status)
        summary.raise(settled.status)
    }

    /// Counts the queued files a run leaves alone: in conflict with another track's key, waiting
    /// for `r2up retry` or for their next attempt, or held by another live r2up.
    private static func count(waiting: [(job: UploadJob, disposition: JobDisposition)], into summary: inout SyncSummary) {
        for (job, disposition) in waiting {
            switch disposition {
            case .conflict(let conflict):
                let refusal = Intake.Conflict(path: job.path, conflict)
                summary.fail(SyncFailure(path: refusal.path, key: refusal.key, error: refusal.reason))
            case .waitsForRetry:
                summary.awaitingRetry += 1
            case .waitsUntil(let date):
                summary.retryLater += 1
                summary.nextRetryAt = min(summary.nextRetryAt ?? date, date)
                summary.retryAt[job.path] = min(summary.retryAt[job.path] ?? date, date)
            case .heldBy:
                summary.heldElsewhere += 1
            case .uploaded:
                // Another run (a push of the folder) uploaded it since the scan.
                summary.unchanged += 1
            case .ready:
                break
            }
        }
    }

    /// `--delete-moved`: the old objects of tracks whose copies were verified (the copy job
    /// completes only after a HEAD of its new key), unless a track holds the old key again.
    /// A deletion that fails is a failure of the run; the object stays.
    private func deleteMoved(_ keys: [String], store: Store, into summary: inout SyncSummary) async -> Int {
        var deleted: [String] = []
        for key in keys {
            do {
                guard try store.keyHolder(bucket: service.bucket, key: key) == nil else { continue }
                try await service.client.deleteObject(bucket: service.bucket, key: key)
                deleted.append(key)
            } catch {
                summary.failures.append(SyncFailure(
                    path: key, key: key, error: "the moved track's old object was not deleted (\(OptionName.deleteMoved.option)): \(Diagnosis(error).message)"))
                summary.raise(.uploadFailed)
            }
        }
        do {
            try store.recordDeletions(bucket: service.bucket, keys: deleted)
        } catch {
            summary.failures.append(SyncFailure(path: databasePath, key: deleted.first ?? "", error: Diagnosis(error).message))
            summary.raise(.storeFailure)
        }
        return deleted.count
    }

    /// Jobs turned away at their start: a file that changed waits for the next run (returns how
    /// many); one that is gone has nothing left to upload, and its job is dropped.
    func settleDeferred(_ jobs: [UploadJob], store: Store) async throws -> Int {
        let gone = jobs.filter { access($0.path, F_OK) != 0 && errno == ENOENT }
        if !gone.isEmpty {
            let queue = UploadQueue(store: store, service: service)
            for (key, uploadID) in try store.dropJobs(gone.map(\.id)) {
                await queue.abort(bucket: service.bucket, key: key, uploadID: uploadID)
            }
        }
        return jobs.count - gone.count
    }

    /// Whether the file still has the size and mtime its job was queued with.
    static func isAsQueued(_ job: UploadJob) -> Bool {
        var info = stat()
        guard stat(job.path, &info) == 0 else { return false }
        let mtime = info.mtimeNs
        return Int64(info.st_size) == job.length && mtime == job.mtimeNs
    }
}
