import Foundation
import Hummingbird
import R2UpKit
import ServiceLifecycle
import Synchronization

/// Follows the store through the session's one cheap commit watcher: after each change it
/// reads the rows that changed (``R2UpSession/changedTracks(since:)``), puts them in the
/// Library the pages show (``LibrarySnapshot``) and makes one update for every open page; each
/// page's stream says what changed since the state it shows. The whole library is read when the
/// server starts, when a change brings a track the pages do not show yet, and in the background
/// when a page loads over a second after the last such read (what it finds on disk comes live).
/// It also owns the uploads and downloads the pages started, so a stop cancels them the way
/// Ctrl-C stops a push.
final class LiveFeed: Service, Sendable {
    let library: Library
    let states: LiveStates
    /// Full reads of the library, shared by every caller that waits for one; each makes the
    /// snapshot anew.
    let reads: FreshReads<LibrarySnapshot>
    /// The Library as the pages show it; nil until the first full read.
    private let current: Box<LibrarySnapshot?>
    /// Reads, full and of the changes, one at a time in order.
    private let work = DispatchQueue(label: "r2up.serve.library")
    /// A full read started by a page load is under way.
    private let refreshing = Mutex(false)
    private let actions = ServerTasks()

    /// When the requests stopped: see ``run()``.
    private let idle: IdleRelease

    init(library: Library, idle: IdleRelease = IdleRelease()) {
        self.library = library
        self.idle = idle
        let states = LiveStates(session: library.session)
        let current = Box<LibrarySnapshot?>(nil)
        self.states = states
        self.current = current
        reads = FreshReads(queue: work) { () throws(R2UpFailure) in
            let (mark, started) = (library.session.changeMark(), ContinuousClock.now)
            let view = try library.view()
            let snapshot = LibrarySnapshot(view: view, version: states.absorb(view), mark: mark, read: started)
            current.value.withLock { $0 = snapshot }
            return snapshot
        }
    }

    /// The Library as the pages show it: the snapshot, kept current with the store; when its
    /// look at the disk is over a second old a full read starts in the background (what it
    /// finds comes live). The first call waits for the first full read.
    func shown() async throws(R2UpFailure) -> LibrarySnapshot {
        guard let snapshot = current.value.withLock({ $0 }) else { return try await reads.value() }
        if ContinuousClock.now - snapshot.read > .seconds(1), !refreshing.withLock({ $0 }) {
            refreshing.withLock { $0 = true }
            Task { [self] in
                _ = try? await reads.value()
                refreshing.withLock { $0 = false }
            }
        }
        return snapshot
    }

    /// Reads the rows changed since the snapshot's mark and puts them in it: false when the
    /// snapshot cannot take them (none yet, or a track it has no place for): a full read must.
    private func follow() throws(R2UpFailure) -> Bool {
        guard var snapshot = current.value.withLock({ $0 }) else { return false }
        let session = library.session
        let changed = try session.changedTracks(since: snapshot.mark)
        guard let (tracks, groups) = snapshot.apply(changed.tracks, library: library) else { return false }
        snapshot.version = states.absorb(tracks: tracks, groups: groups.map { snapshot.view.groups[$0] }, report: try? session.queueReport())
        snapshot.mark = changed.next
        current.value.withLock { $0 = snapshot }
        return true
    }

    /// ``follow()`` on the reads' queue, after the read before it.
    private func followInTurn() async -> Bool {
        await withCheckedContinuation { continuation in
            work.async { continuation.resume(returning: (try? self.follow()) ?? false) }
        }
    }

    /// Closes the store's idle read connections and hands freed memory back, on the reads'
    /// queue (after the read before it, never during one).
    private func releaseInTurn() async {
        let session = library.session
        await withCheckedContinuation { continuation in
            work.async {
                session.releaseMemory()
                ProcessMemory.releaseFreed()
                continuation.resume()
            }
        }
    }

    /// Runs `work` as the server's: cancelled (uploads left resumable) when the server stops.
    func start(_ work: @escaping @Sendable () async -> Void) {
        actions.start(work)
    }

    func run() async throws {
        let session = library.session
        let reads = reads
        let (ticks, tick) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask {
                // One watcher for every page. A failure to read is said by the page's state
                // staying put; the stream ends.
                do {
                    for try await _ in session.storeChanges() { tick.yield() }
                } catch {}
            }
            group.addTask {
                // A second after the last request of a burst: its memory goes back.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if self.idle.due(quiet: .seconds(1)) { await self.releaseInTurn() }
                }
            }
            group.addTask {
                for await _ in ticks.cancelOnGracefulShutdown() {
                    if await !self.followInTurn() { _ = try? await reads.value() }
                    // At most ten reads a second: a big push commits far more often.
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            // Until the server is told to stop (or this task is cancelled).
            try? await gracefulShutdown()
            stop()
            tick.finish()
            group.cancelAll()
        }
    }

    /// Ends every page's stream and cancels the server's uploads, then waits for them.
    private func stop() {
        states.close()
        actions.cancelAll()
    }

    /// Waits for the uploads the pages started to end (after ``stop()`` cancelled them; a
    /// cancelled push ends within milliseconds), for at most `limit`: a bound, so a stop ends
    /// the server even if one never answered (its job stays queued and resumes with the next
    /// run, as after a kill).
    func drain(limit: Duration = .seconds(10)) async {
        await actions.drain(limit: limit)
    }

    /// The server-sent events of a page that shows version `since` (nil: nothing of the
    /// feed's): every change from there, as `event: state`.
    func events(since: Int?) -> ResponseBody {
        let versions = states.subscribe()
        let states = states
        return ResponseBody { writer in
            var shown = since
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            for await version in versions where version != shown {
                let (updates, now) = states.updates(since: shown)
                shown = now
                for update in updates { try await writer.write(ByteBuffer(string: "event: state\ndata: \(update)\n\n")) }
            }
            try await writer.finish(nil)
        }
    }
}

/// A value shared between a class and the closures it makes before its `init` ends.
final class Box<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}
