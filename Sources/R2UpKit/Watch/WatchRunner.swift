import Foundation
import Synchronization
public import R2UpModel
public import R2UpStore

/// How a watch runs (`r2up watch`'s flags): sync's, plus how often to look at everything.
public struct WatchOptions: Sendable {
    /// The rules of each pass; `minAge` is how long a file must be quiet (default 2 s).
    public var sync = SyncOptions()
    /// A full pass this often whatever inotify says (`--rescan`, default 10 min).
    public var rescanEvery: Duration = .seconds(600)
    /// How often folders inotify cannot watch are scanned instead.
    public static let unwatchedRescan: Duration = .seconds(15)
    /// Run after the first pass and after each full pass (`--offload-after`).
    public var afterFullPass: (@Sendable () async -> Void)?
    /// A job failed by a cut connection or a server restart is tried again within seconds (a
    /// backoff from 2 s up to 30 s), not a sync's minutes: a daemon takes it once the server answers.
    static let retryPolicy = JobRetryPolicy(maxInProcessAttempts: 2, nextRunBase: .seconds(2), nextRunCap: .seconds(30))

    public init() {
        sync.minAge = .seconds(2)
    }
}

/// What a watch reports as it goes (JSON Lines with `--json`).
public enum WatchEvent: Sendable {
    /// The initial pass is done and every folder is watched.
    case watching(roots: [String], folders: Int, initial: SyncSummary)
    case queued(UploadJob)
    case uploaded(UploadJob, UploadItem)
    /// A moved track copied inside the bucket from its old key (`item.copiedFrom`).
    case copied(UploadJob, UploadItem)
    case failed(SyncFailure)
    /// One line for the user: the watch limit, a folder that cannot be watched or read.
    case notice(String)
}

/// Asks a watch to stop: no new upload starts; the loop ends after the batch in flight.
public final class WatchStop: Sendable {
    private let requested = Atomic(false)

    public init() {}

    public func request() { requested.store(true, ordering: .relaxed) }
    public var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// How a watch ended.
public struct WatchSummary: Sendable {
    public var uploaded = 0
    /// Moved tracks copied inside the bucket (no bytes sent): counted apart from uploads.
    public var copied = 0
    public var failed = 0
    /// What stopped it by itself (credentials, bucket, store): the watch exits with its status.
    public var stoppedBy: Diagnosis?
    /// Uploads left queued at the stop; the next run resumes them.
    public var leftResumable = 0
}

/// `r2up watch DIR…`: a sync pass, then inotify; each batch of quiet files goes through the
/// same plan, store and queue as `sync` (the same keys, identity rules and guards), under
/// the same lock, held for the whole watch.
public struct WatchRunner: Sendable {
    public let service: UploadService
    public let databasePath: String

    public init(service: UploadService, databasePath: String) {
        self.service = service
        self.databasePath = databasePath
    }

    /// Watches until `stop` is requested or the task is cancelled. Throws what stops it
    /// before it starts: a folder that is not one, the lock held (`SyncError`), inotify
    /// (`WatchError`), the store.
    /// - Parameters:
    ///   - folders: the folders to watch, each with its subfolders.
    ///   - options: the keys, filters and tags the uploads use.
    ///   - stop: requested to end the watch (a signal handler sets it).
    ///   - onEvent: told each file queued, uploaded, copied or failed; called off the caller's task.
    ///   - settled: called when uploads happened and nothing is pending any more
    ///     (the command republishes the catalog then).
    /// - Returns: what the watch did, once it stops.
    public func run(
        _ folders: [String], options: WatchOptions, stop: WatchStop,
        onEvent: @escaping @Sendable (WatchEvent) -> Void, settled: (@Sendable () async -> Void)? = nil
    ) async throws -> WatchSummary {
        var roots: [String] = []
        for folder in folders {
            try options.sync.mirror.delete
                ? SyncError.checkFolderToMirror(folder, command: "watch") : SyncError.checkFolder(folder, command: "watch")
            let root = URL(fileURLWithPath: folder).standardizedFileURL.path  // as sync spells it: the same track paths
            if let other = roots.first(where: { Self.contains($0, root) || Self.contains(root, $0) }) {
                throw WatchError.overlapping(other, root)
            }
            roots.append(root)
        }
        let store = try Store(path: databasePath)
        let lockPath = SyncLock.path(forDatabase: databasePath)
        let lock = options.sync.waitForLock
            ? try await SyncLock.acquireWaiting(path: lockPath, holder: "watch")
            : try SyncLock.acquire(path: lockPath, holder: "watch")
        defer { withExtendedLifetime(lock) {} }

        let scanner = SyncScanner(followSymlinks: options.sync.followSymlinks, skipHidden: options.sync.filter.usesDefaultExcludes)
        // Watching starts before the first pass: what lands during it is seen.
        let watcher = try FolderWatcher(
            roots: roots, skipHidden: scanner.skipHidden, followSymlinks: scanner.followSymlinks)
        let folderCount = watcher.start()
        defer { watcher.stop() }

        let tally = Mutex(WatchSummary())
        var base = options.sync
        base.dryRun = false
        base.onQueued = { job in onEvent(.queued(job)) }
        base.onEvent = { event in
            guard case .completed(let job, let item, _) = event else { return }
            if item.copiedFrom != nil {
                tally.withLock { $0.copied += 1 }
                onEvent(.copied(job, item))
            } else {
                tally.withLock { $0.uploaded += 1 }
                onEvent(.uploaded(job, item))
            }
        }
        base.admitsMore = { !stop.isRequested }
        base.retryPolicy = WatchOptions.retryPolicy
        let sync = SyncRunner(service: service, databasePath: databasePath)
        var loop = WatchLoop(minAge: options.sync.minAge)

        /// One pass; returns false when the watch must end.
        func pass(_ root: String, only paths: [String]?, first: Bool) async throws -> (going: Bool, summary: SyncSummary) {
            var chosen = base
            chosen.abortsOrphans = first
            if paths != nil { chosen.verifyRemote = false }  // a batch: the listing is for full passes
            var summary = try await sync.pass(root: root, store: store, options: chosen, only: paths)
            // --delete after a full pass only: a batch does not see the whole folder.
            if paths == nil && chosen.mirror.delete {
                try await sync.settleStale(root: root, store: store, options: chosen, into: &summary)
                for deletion in summary.deletions { onEvent(.notice("deleted \(deletion.key) from the bucket (\(deletion.reason == "moved" ? "moved" : "file gone"))")) }
                if let refused = summary.deletionRefused { onEvent(.notice("\(OptionName.delete.option): \(refused)")) }
            }
            for problem in summary.problems { onEvent(.notice("\(problem.path): \(problem.message)")) }
            for failure in summary.failures { onEvent(.failed(failure)) }
            tally.withLock { $0.failed += summary.failures.count }
            let now = ContinuousClock.now
            for path in summary.retryPaths {
                if let due = WatchFiles.due(path, minAge: options.sync.minAge, now: now) { loop.schedule(path, at: due) }
            }
            // Failed retryably (or still waiting for an earlier try's time): looked at again when due.
            let wall = Date()
            for (path, date) in summary.retryAt {
                let wait = date.timeIntervalSince(wall)  // a full pass comes by the rescan anyway
                loop.schedule(path, at: now + .seconds(wait.isFinite ? min(max(wait, 0.25), 86_400) : 0.25))
            }
            if let stopped = summary.stoppedBy {
                tally.withLock {
                    $0.stoppedBy = Diagnosis(category: summary.status, message: stopped)
                    $0.leftResumable += summary.leftResumable
                }
                return (false, summary)
            }
            if summary.interrupted || stop.isRequested || Task.isCancelled {
                tally.withLock { $0.leftResumable += summary.leftResumable }
                return (false, summary)
            }
            return (true, summary)
        }

        var initial = SyncSummary()
        for root in roots {
            let (going, summary) = try await pass(root, only: nil, first: true)
            initial.uploaded += summary.uploaded
            initial.uploadedBytes += summary.uploadedBytes
            initial.copied += summary.copied
            initial.unchanged += summary.unchanged
            initial.waiting += summary.waiting
            initial.failures += summary.failures
            guard going else { return tally.withLock { $0 } }
        }
        onEvent(.watching(roots: roots, folders: folderCount, initial: initial))
        await options.afterFullPass?()
        loop.nextFull = .now + options.rescanEvery
        var uploadedSinceSettle = tally.withLock { $0.uploaded } > 0

        while !stop.isRequested && !Task.isCancelled {
            let now = ContinuousClock.now
            let changes = watcher.take()
            for notice in changes.notices { onEvent(.notice(notice)) }
            loop.merge(changes, now: now)
            for folder in loop.takeFolders(now: now) {
                for path in WatchFiles.under(folder, scanner: scanner) { loop.schedule(path, at: now) }
            }
            if loop.fullPassDue(now: now) {
                loop.nextFull = now + options.rescanEvery
                loop.dropDue(now: now)  // the full pass looks at them
                for root in roots {
                    let before = tally.withLock { $0.uploaded }
                    guard try await pass(root, only: nil, first: false).going else { return tally.withLock { $0 } }
                    if tally.withLock({ $0.uploaded }) > before { uploadedSinceSettle = true }
                }
                await options.afterFullPass?()
                continue
            }
            let ready = loop.takeDue(now: now)
            if !ready.isEmpty {
                for root in roots {
                    let mine = ready.filter { Self.contains(root, $0) }
                    guard !mine.isEmpty else { continue }
                    let before = tally.withLock { $0.uploaded }
                    guard try await pass(root, only: mine, first: false).going else { return tally.withLock { $0 } }
                    if tally.withLock({ $0.uploaded }) > before { uploadedSinceSettle = true }
                }
                continue
            }
            if uploadedSinceSettle && loop.isIdle, let settled {
                uploadedSinceSettle = false
                await settled()
                continue
            }
            try? await Task.sleep(for: loop.sleep(now: now))
        }
        return tally.withLock { $0 }
    }

    /// Whether `path` is `folder` or under it.
    static func contains(_ folder: String, _ path: String) -> Bool {
        path == folder || path.hasPrefix(folder == "/" ? "/" : folder + "/")
    }
}

/// The watch's timetable: files waiting to be quiet, folders to scan, the next full pass.
/// A pure value (time comes in), so its rules are tested without waiting.
struct WatchLoop {
    let minAge: Duration
    /// Each file's earliest upload time; a new event pushes it back.
    private(set) var pending: [ExactPath: ContinuousClock.Instant] = [:]
    private var folders: Set<String> = []
    private var unwatched: Set<String> = []
    private var nextUnwatched: ContinuousClock.Instant?
    var nextFull: ContinuousClock.Instant = .now

    init(minAge: Duration) { self.minAge = minAge }

    /// Longest sleep between looks at the inbox: latency stays well under a second, idle CPU near zero.
    static let tick = Duration.milliseconds(200)

    mutating func merge(_ changes: WatchChanges, now: ContinuousClock.Instant) {
        for (path, at) in changes.files { schedule(path, at: at + minAge) }
        folders.formUnion(changes.folders)
        if changes.everything { nextFull = now }
        if !changes.unwatched.isEmpty {
            unwatched.formUnion(changes.unwatched)
            // Scanned at once (it may hold files already), then on the timer.
            folders.formUnion(changes.unwatched)
            if nextUnwatched == nil { nextUnwatched = now + WatchOptions.unwatchedRescan }
        }
        unwatched.subtract(changes.rewatched)
        if unwatched.isEmpty { nextUnwatched = nil }
    }

    /// A file is looked at no sooner than `at`; a later event moves it later, never sooner.
    mutating func schedule(_ path: String, at: ContinuousClock.Instant) {
        schedule(ExactPath(path), at: at)
    }

    mutating func schedule(_ path: ExactPath, at: ContinuousClock.Instant) {
        pending[path] = max(pending[path] ?? at, at)
    }

    /// New folders to scan now, and the unwatchable ones when their time has come.
    mutating func takeFolders(now: ContinuousClock.Instant) -> Set<String> {
        var taken = folders
        folders = []
        if let next = nextUnwatched, next <= now {
            taken.formUnion(unwatched)
            nextUnwatched = now + WatchOptions.unwatchedRescan
        }
        return taken
    }

    func fullPassDue(now: ContinuousClock.Instant) -> Bool { nextFull <= now }

    /// The files whose time has come, in path order.
    mutating func takeDue(now: ContinuousClock.Instant) -> [String] {
        let due = pending.filter { $0.value <= now }.map(\.key)
        for path in due { pending.removeValue(forKey: path) }
        return due.map(\.path).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    mutating func dropDue(now: ContinuousClock.Instant) { _ = takeDue(now: now) }

    var isIdle: Bool { pending.isEmpty && folders.isEmpty }

    /// How long to sleep: until the next file is due, at most a tick.
    func sleep(now: ContinuousClock.Instant) -> Duration {
        let next = pending.values.min().map { $0 - now } ?? Self.tick
        return max(.milliseconds(10), min(next, Self.tick))
    }
}
