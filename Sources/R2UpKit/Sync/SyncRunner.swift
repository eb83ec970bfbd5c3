import Foundation
import R2UpAudio
import R2UpModel
import R2UpStore
import R2UpTransfer

/// `r2up sync DIR`: upload what is new or changed under a folder, through the durable queue.
package struct SyncRunner: Sendable {
    package let service: UploadService
    /// The database file; the lock file sits beside it.
    package let databasePath: String

    package init(service: UploadService, databasePath: String) {
        self.service = service
        self.databasePath = databasePath
    }

    /// Runs one sync of `folder`. Throws only what stops the whole run: the lock is held
    /// (`SyncError`), the store fails (`StoreError`), the listing fails (`S3ClientError`);
    /// a file that fails is in the summary's failures.
    package func run(_ folder: String, options: SyncOptions) async throws -> SyncSummary {
        let started = ContinuousClock.now
        try checkFolder(folder, command: "sync", delete: options.mirror.delete)
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
        let tags = TagResolver(store: store)
        let scanned = try await scan(root: root, store: store, options: options, only: paths, prefix: prefix, tags: tags)
        var plan = scanned.plan
        // Tracks that follow their files (moved, or another prefix or template) are copies, not uploads.
        let moved = try Intake.follow(plan.uploads, vanished: scanned.vanished, store: store, bucket: service.bucket)
        plan.uploads = moved.uploads

        var summary = SyncSummary(plan: plan, problems: scanned.problems, root: root, options: options)
        (summary.vanished, summary.movedTracks) = (scanned.vanished, moved.moves.map(\.track))
        if options.dryRun {
            summary.plan(plan.uploads, moves: moved.moves)
        } else if let store {
            if !plan.cloudOnly.isEmpty {
                try store.recordCloudOnly(plan.cloudOnly.map { object in
                    (root + "/" + String(object.key.dropFirst(prefix.count)),
                     CloudCopy(bucket: service.bucket, key: object.key, etag: object.etag), object.size)
                })
            }
            try await dropGoneJobs(root: root, only: paths, store: store)
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
        if summary.category == .success && !summary.failures.isEmpty { summary.category = .uploadFailed }

        summary.seconds = (ContinuousClock.now - started) / .seconds(1)
        summary.depth = service.uploader.slots.depthReport
        return summary
    }

    /// The plan of a pass: the scan and the store walk side by side in path order (memory stays
    /// flat at 100,000 files), or a watch's batch of files; with the tracks gone from their paths.
    private func scan(
        root: String, store: Store?, options: SyncOptions, only paths: [String]?, prefix: String, tags: TagResolver
    ) async throws -> (plan: SyncPlan, problems: [ScanProblem], vanished: [VanishedTrack]) {
        let remote = options.verifyRemote ? try await listing(prefix: prefix) : nil
        let nowNs = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        let minAge = options.minAge.components
        var plan = SyncPlan(
            prefix: prefix, bucket: service.bucket, filter: options.filter, remote: remote,
            minAgeNs: LocalFile.nanoseconds(timespec(tv_sec: Int(minAge.seconds), tv_nsec: Int(minAge.attoseconds / 1_000_000_000))),
            nowNs: nowNs)
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
        return (plan, problems, vanished)
    }

    /// Every object under the prefix, by key (ListObjectsV2, 1,000 a page).
    private func listing(prefix: String) async throws -> [String: ObjectSummary] {
        var objects: [String: ObjectSummary] = [:]
        for object in try await service.client.listAllObjects(bucket: service.bucket, prefix: prefix).objects {
            objects[ObjectKey.nfc(object.key)] = object
        }
        return objects
    }
}
