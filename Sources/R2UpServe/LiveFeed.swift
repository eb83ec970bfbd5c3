import Foundation
import Hummingbird
import R2UpKit
import ServiceLifecycle
import Synchronization

/// What the pages show that can change: each track's icon, each group's summary, the queue's
/// counts. One copy for every open page: a row holds its state and key, and its URL and actions
/// are made only for an update that carries it.
struct LiveState: Sendable, Equatable {
    struct Row: Sendable, Equatable {
        var icon: TrackIcon
        var key: String?
        var error: String?
    }

    struct Header: Sendable, Equatable {
        var summary: GroupSummary
        var actions: [String]
    }

    /// Counts up with each state the feed makes: a page that was sent state N - 1 takes the
    /// update the feed made once for all pages.
    var version = 0
    var rows: [String: Row] = [:]
    var headers: [String: Header] = [:]
    var counts: [String: Int] = [:]

    init() {}

    init(groups: [TrackGroup<TrackStatus>], report: QueueReport?) {
        rows.reserveCapacity(groups.reduce(0) { $0 + $1.tracks.count })
        for group in groups {
            headers[group.id] = Header(summary: group.summary, actions: Actions.shown(group))
            for track in group.tracks {
                let failed = track.icon == .uploadError || track.icon == .downloadError
                rows[track.path] = Row(icon: track.icon, key: track.key, error: failed ? track.lastError : nil)
            }
        }
        if let counts = report?.counts {
            self.counts = ["queued": counts.queued, "uploading": counts.uploading, "interrupted": counts.interrupted, "failed": counts.failed]
        }
    }

    /// Whether a page shows the same: everything but the version.
    func shows(_ other: LiveState) -> Bool { rows == other.rows && headers == other.headers && counts == other.counts }

    /// The changes from `old` to this, as the page's script reads them (one JSON object).
    func update(from old: LiveState, publicURL: (String) -> String) -> String? {
        struct Update: Encodable {
            var t: [[String]] = []
            var g: [[String]] = []
            var q: [String: Int]?
        }
        var update = Update()
        for (path, row) in rows where old.rows[path] != row {
            let icon = row.icon
            let actions = Actions.shown(icon: icon, inCloud: row.key != nil).joined(separator: " ")
            update.t.append([path, icon.name, icon.glyph ?? "", icon.spoken, row.key.map(publicURL) ?? "", row.error ?? "", actions])
        }
        for (id, header) in headers where old.headers[id] != header {
            let summary = header.summary
            update.g.append([id, summary.label(ascii: false), summary.name ?? "none", summary.spoken, header.actions.joined(separator: " ")])
        }
        if counts != old.counts { update.q = counts }
        guard !update.t.isEmpty || !update.g.isEmpty || update.q != nil else { return nil }
        guard let data = try? JSONEncoder().encode(update) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The states the pages show, newest last, and the pages that follow them. Every read of the
/// library, a page's or the feed's, goes through ``absorb(_:)``, so a page rendered from a read
/// knows the version its rows show and its live stream goes on from exactly there.
final class LiveStates: Sendable {
    let session: R2UpSession
    /// Each open page's wake-up (the newest version); a page asks ``updates(since:)`` for its text.
    private let subscribers = Mutex<[UUID: AsyncStream<Int>.Continuation]>([:])
    private let latest = Mutex(Latest())
    private let closed = Mutex(false)

    /// The newest state and the updates that led to it, newest last.
    struct Latest {
        var state = LiveState()
        var recent: [(version: Int, update: String?)] = []
        /// Updates kept for a page that fell behind (a busy push makes ten a second).
        static let kept = 32
    }

    init(session: R2UpSession) {
        self.session = session
    }

    /// The version of the newest state.
    var version: Int { latest.withLock { $0.state.version } }

    /// The state of a new read: a new version when the pages would show something else (the
    /// update to it made once for every page), else the newest one. Reads come one at a time.
    func absorb(_ view: LibraryView) -> Int {
        var state = LiveState(groups: view.groups, report: try? session.queueReport())
        let old = latest.withLock { $0.state }
        guard !state.shows(old) else { return old.version }
        state.version = old.version + 1
        // None for the first state: a page that showed nothing of the feed's gets every row.
        let update = old.version == 0 ? nil : state.update(from: old) { session.publicURL(for: $0) }
        latest.withLock { latest in
            latest.state = state
            if old.version > 0 { latest.recent.append((state.version, update)) }
            if latest.recent.count > Latest.kept { latest.recent.removeFirst(latest.recent.count - Latest.kept) }
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(state.version) }
        return state.version
    }

    /// The newest version now and after each change, until ``close()``.
    func subscribe() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let isClosed = closed.withLock { closed in
            if !closed { subscribers.withLock { $0[id] = continuation } }
            return closed
        }
        if isClosed {
            continuation.finish()
            return stream
        }
        continuation.yield(version)
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    /// Ends every page's stream; no new one starts.
    func close() {
        closed.withLock { $0 = true }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// What a page that shows version `since` (nil: nothing yet) must apply to show the newest
    /// state, and that state's version: the kept updates when they reach back that far, else
    /// every row (a page that fell far behind, or opened before the first state).
    func updates(since: Int?) -> (updates: [String], version: Int) {
        let (state, kept): (LiveState, [String]?) = latest.withLock { latest in
            let version = latest.state.version
            guard let since, since != version else { return (latest.state, []) }
            guard since > 0, since < version, let first = latest.recent.first, first.version <= since + 1 else { return (latest.state, nil) }
            return (latest.state, latest.recent.filter { $0.version > since }.compactMap(\.update))
        }
        if let kept { return (kept, state.version) }
        return (state.update(from: LiveState()) { session.publicURL(for: $0) }.map { [$0] } ?? [], state.version)
    }
}

/// Follows the store through the session's one cheap commit watcher and reads the library once
/// per change for every open page (the same shared reads the pages make); each page's stream
/// says what changed since the state it shows. It also owns the uploads and downloads the pages
/// started, so a stop cancels them the way Ctrl-C stops a push.
final class LiveFeed: Service, Sendable {
    let library: Library
    let states: LiveStates
    /// The library and the version of the pages' state it shows.
    let reads: FreshReads<(view: LibraryView, version: Int)>
    private let actions = Mutex<[UUID: Task<Void, Never>]>([:])

    init(library: Library) {
        self.library = library
        let states = LiveStates(session: library.session)
        self.states = states
        // A read is kept two seconds: the art and the pages a page load brings share it.
        reads = FreshReads(label: "r2up.serve.library", keep: .seconds(2)) { () throws(R2UpFailure) in
            let view = try library.view()
            return (view, states.absorb(view))
        }
    }

    /// Runs `work` as the server's: cancelled (uploads left resumable) when the server stops.
    func start(_ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        let task = Task { [weak self] in
            await work()
            _ = self?.actions.withLock { $0.removeValue(forKey: id) }
        }
        actions.withLock { $0[id] = task }
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
                    for try await _ in session.storeChanges() {
                        reads.storeChanged()
                        tick.yield()
                    }
                } catch {}
            }
            group.addTask {
                for await _ in ticks.cancelOnGracefulShutdown() {
                    _ = try? await reads.value()
                    Routes.releaseFreedMemory()
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
        for task in actions.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// Waits for the uploads the pages started to end (after ``stop()`` cancelled them).
    func drain() async {
        while let task = actions.withLock({ $0.values.first }) {
            await task.value
            try? await Task.sleep(for: .milliseconds(10))
        }
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
