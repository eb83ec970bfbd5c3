import Foundation
import Synchronization
import R2UpModel
import R2UpStore

/// What a watch did so far: its runs' events come on the transfer or store thread.
final class WatchTally: Sendable {
    private let tally = Mutex(WatchSummary())

    var summary: WatchSummary { tally.withLock { $0 } }
    var uploaded: Int { tally.withLock { $0.uploaded } }

    func update(_ change: (inout WatchSummary) -> Void) {
        tally.withLock { change(&$0) }
    }
}

/// A watch under way, the lock held and the folders watched: its sync passes (the first full
/// ones, then each batch of quiet files and each rescan) and the timetable they feed.
struct WatchSession {
    let roots: [String]
    let options: WatchOptions
    let stop: WatchStop
    let onEvent: @Sendable (WatchEvent) -> Void
    let store: Store
    let sync: SyncRunner
    let tally = WatchTally()
    /// The sync options of every pass: what is uploaded and copied is told and counted.
    private let base: SyncOptions
    private var loop: WatchLoop
    private var uploadedSinceSettle = false
    /// When the store's idle connections and the allocator's free pages were last handed back.
    private var lastRelease = ContinuousClock.now
    private var passedSinceRelease = false
    /// Memory is handed back this soon after a pass once the watch is idle, and at least this
    /// often while it is busy (each costs a few milliseconds; a reader is reopened after it).
    static let releaseWhenIdle = Duration.seconds(10)
    static let releaseWhenBusy = Duration.seconds(60)

    init(
        roots: [String], options: WatchOptions, stop: WatchStop, onEvent: @escaping @Sendable (WatchEvent) -> Void,
        store: Store, sync: SyncRunner
    ) {
        self.roots = roots
        self.options = options
        self.stop = stop
        self.onEvent = onEvent
        self.store = store
        self.sync = sync
        loop = WatchLoop(minAge: options.sync.minAge)
        let tally = tally
        var base = options.sync
        base.dryRun = false
        base.onQueued = { job in onEvent(.queued(job)) }
        base.onEvent = { event in
            guard case .completed(let job, let item, _) = event else { return }
            if item.copiedFrom != nil {
                tally.update { $0.copied += 1 }
                onEvent(.copied(job, item))
            } else {
                tally.update { $0.uploaded += 1 }
                onEvent(.uploaded(job, item))
            }
        }
        base.admitsMore = { !stop.isRequested }
        base.retryPolicy = WatchOptions.retryPolicy
        self.base = base
    }

    /// A full pass over each folder, then `.watching`; false when the watch must end.
    mutating func firstPasses(folders folderCount: Int) async throws -> Bool {
        var initial = SyncSummary()
        for root in roots {
            let (going, summary) = try await pass(root, only: nil, first: true)
            initial.uploaded += summary.uploaded
            initial.uploadedBytes += summary.uploadedBytes
            initial.copied += summary.copied
            initial.unchanged += summary.unchanged
            initial.waiting += summary.waiting
            initial.failures += summary.failures
            guard going else { return false }
        }
        onEvent(.watching(roots: roots, folders: folderCount, initial: initial))
        await options.afterFullPass?()
        loop.nextFull = .now + options.rescanEvery
        uploadedSinceSettle = tally.uploaded > 0
        return true
    }

    /// What inotify says, as batches of quiet files and rescans, until the watch must end.
    mutating func follow(
        _ watcher: FolderWatcher, scanner: SyncScanner, settled: (@Sendable () async -> Void)?
    ) async throws {
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
                guard try await passes(only: nil) else { return }
                await options.afterFullPass?()
                continue
            }
            let ready = loop.takeDue(now: now)
            if !ready.isEmpty {
                guard try await passes(only: ready) else { return }
                continue
            }
            if uploadedSinceSettle && loop.isIdle, let settled {
                uploadedSinceSettle = false
                await settled()
                continue
            }
            releaseMemory(now: now)
            try? await Task.sleep(for: loop.sleep(now: now))
        }
    }

    /// A daemon's memory follows what it does now, not its busiest minute: the store's idle read
    /// connections and page caches, and the pages glibc keeps freed, go back after the passes.
    private mutating func releaseMemory(now: ContinuousClock.Instant) {
        guard passedSinceRelease, now - lastRelease >= (loop.isIdle ? Self.releaseWhenIdle : Self.releaseWhenBusy) else { return }
        passedSinceRelease = false
        lastRelease = now
        store.releaseMemory()
        ProcessMemory.releaseFreed()
    }

    /// A pass over each folder: the whole of it, or its files among `ready`; false when the
    /// watch must end.
    private mutating func passes(only ready: [String]?) async throws -> Bool {
        passedSinceRelease = true
        for root in roots {
            let mine = ready.map { $0.filter { WatchRunner.contains(root, $0) } }
            if let mine, mine.isEmpty { continue }
            let before = tally.uploaded
            guard try await pass(root, only: mine, first: false).going else { return false }
            if tally.uploaded > before { uploadedSinceSettle = true }
        }
        return true
    }

    /// One pass; `going` is false when the watch must end.
    private mutating func pass(
        _ root: String, only paths: [String]?, first: Bool
    ) async throws -> (going: Bool, summary: SyncSummary) {
        var chosen = base
        chosen.abortsOrphans = first
        if paths != nil { chosen.verifyRemote = false }  // a batch: the listing is for full passes
        var summary = try await sync.pass(root: root, store: store, options: chosen, only: paths)
        // --delete after a full pass only: a batch does not see the whole folder.
        if paths == nil && chosen.mirror.delete {
            try await sync.settleStale(root: root, store: store, options: chosen, into: &summary)
            for deletion in summary.deletions { onEvent(.notice("deleted \(deletion.key) from the bucket (\(deletion.reason == "moved" ? "moved" : "file gone"))")) }
            for kept in summary.kept { onEvent(.notice("kept \(kept.key) in the bucket (\(SyncSummary.keptWhy))")) }
            if let refused = summary.deletionRefused { onEvent(.notice("\(OptionName.delete.option): \(refused)")) }
        }
        for problem in summary.problems { onEvent(.notice("\(problem.path): \(problem.message)")) }
        for failure in summary.failures { onEvent(.failed(failure)) }
        tally.update { $0.failed += summary.failures.count }
        schedule(summary)
        if let stopped = summary.stoppedBy {
            tally.update {
                $0.stoppedBy = Diagnosis(category: summary.category, message: stopped)
                $0.leftResumable += summary.leftResumable
            }
            return (false, summary)
        }
        if summary.interrupted || stop.isRequested || Task.isCancelled {
            tally.update { $0.leftResumable += summary.leftResumable }
            return (false, summary)
        }
        return (true, summary)
    }

    /// The files a pass left to look at again: once quiet, or when their next try is due.
    private mutating func schedule(_ summary: SyncSummary) {
        let now = ContinuousClock.now
        for path in summary.retryPaths {
            // Gone already: its batch still comes, to drop the job left waiting for it.
            loop.schedule(path, at: WatchFiles.due(path, minAge: options.sync.minAge, now: now) ?? now + .milliseconds(250))
        }
        // Failed retryably (or still waiting for an earlier try's time): looked at again when due.
        let wall = Date()
        for (path, date) in summary.retryAt {
            let wait = date.timeIntervalSince(wall)  // a full pass comes by the rescan anyway
            loop.schedule(path, at: now + .seconds(wait.isFinite ? min(max(wait, 0.25), 86_400) : 0.25))
        }
    }
}
