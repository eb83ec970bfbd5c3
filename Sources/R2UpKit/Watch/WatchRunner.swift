import Foundation
import Synchronization
package import R2UpModel
package import R2UpStore

/// How a watch runs (`r2up watch`'s flags): sync's, plus how often to look at everything.
package struct WatchOptions: Sendable {
    /// The rules of each pass; `minAge` is how long a file must be quiet (default 2 s).
    package var sync = SyncOptions()
    /// A full pass this often whatever inotify says (`--rescan`, default 10 min).
    package var rescanEvery: Duration = .seconds(600)
    /// How often folders inotify cannot watch are scanned instead.
    package static let unwatchedRescan: Duration = .seconds(15)
    /// Run after the first pass and after each full pass (`--offload-after`).
    package var afterFullPass: (@Sendable () async -> Void)?
    /// A job failed by a cut connection or a server restart is tried again within seconds (a
    /// backoff from 2 s up to 30 s), not a sync's minutes: a daemon takes it once the server answers.
    /// So is a write whose checking HEAD kept failing while the server restarted (the soak left
    /// one copy failed for good so): nobody watches a daemon to run `r2up retry`.
    static let retryPolicy: JobRetryPolicy = {
        var policy = JobRetryPolicy(maxInProcessAttempts: 2, nextRunBase: .seconds(2), nextRunCap: .seconds(30))
        policy.retriesUnconfirmed = true
        return policy
    }()

    package init() {
        sync.minAge = .seconds(2)
    }
}

/// What a watch reports as it goes (JSON Lines with `--json`).
package enum WatchEvent: Sendable {
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
package final class WatchStop: Sendable {
    private let requested = Atomic(false)

    package init() {}

    package func request() { requested.store(true, ordering: .relaxed) }
    package var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// How a watch ended.
package struct WatchSummary: Sendable {
    package var uploaded = 0
    /// Moved tracks copied inside the bucket (no bytes sent): counted apart from uploads.
    package var copied = 0
    package var failed = 0
    /// What stopped it by itself (credentials, bucket, store): the watch exits with its status.
    package var stoppedBy: Diagnosis?
    /// Uploads left queued at the stop; the next run resumes them.
    package var leftResumable = 0
}

/// `r2up watch DIR…`: a sync pass, then inotify; each batch of quiet files goes through the
/// same plan, store and queue as `sync` (the same keys, identity rules and guards), under
/// the same lock, held for the whole watch.
package struct WatchRunner: Sendable {
    package let service: UploadService
    package let databasePath: String

    package init(service: UploadService, databasePath: String) {
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
    package func run(
        _ folders: [String], options: WatchOptions, stop: WatchStop,
        onEvent: @escaping @Sendable (WatchEvent) -> Void, settled: (@Sendable () async -> Void)? = nil
    ) async throws -> WatchSummary {
        let roots = try Self.roots(folders, options: options, sync: SyncRunner(service: service, databasePath: databasePath))
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

        // One HEAD of the bucket first: once the server has answered, a refused connection later
        // is an outage the watch waits out, not a wrong endpoint, even when the first pass had
        // nothing to send.
        await service.reachServer()
        var session = WatchSession(
            roots: roots, options: options, stop: stop, onEvent: onEvent, store: store,
            sync: SyncRunner(service: service, databasePath: databasePath))
        guard try await session.firstPasses(folders: folderCount) else { return session.tally.summary }
        try await session.follow(watcher, scanner: scanner, settled: settled)
        return session.tally.summary
    }

    /// The folders as sync spells them (the same track paths), none inside another.
    private static func roots(_ folders: [String], options: WatchOptions, sync: SyncRunner) throws -> [String] {
        var roots: [String] = []
        for folder in folders {
            try sync.checkFolder(folder, command: "watch", delete: options.sync.mirror.delete)
            let root = URL(fileURLWithPath: folder).standardizedFileURL.path  // as sync spells it: the same track paths
            if let other = roots.first(where: { Self.contains($0, root) || Self.contains(root, $0) }) {
                throw WatchError.overlapping(other, root)
            }
            roots.append(root)
        }
        return roots
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
