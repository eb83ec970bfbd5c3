import Foundation
import Hummingbird
import R2UpKit
import ServiceLifecycle
import Synchronization

/// What the pages show that can change: each track's icon, each group's summary, the queue's counts.
struct LiveState: Sendable, Equatable {
    struct Row: Sendable, Equatable {
        var icon: TrackIcon
        var url: String
        var error: String
        var actions: [String]
    }

    struct Header: Sendable, Equatable {
        var summary: GroupSummary
        var actions: [String]
    }

    var rows: [String: Row] = [:]
    var headers: [String: Header] = [:]
    var counts: [String: Int] = [:]

    init() {}

    init(groups: [TrackGroup<TrackStatus>], report: QueueReport?, publicURL: (String) -> String) {
        for group in groups {
            headers[group.id] = Header(summary: group.summary, actions: Actions.shown(group))
            for track in group.tracks {
                let failed = track.icon == .uploadError || track.icon == .downloadError
                rows[track.path] = Row(
                    icon: track.icon, url: track.key.map(publicURL) ?? "", error: failed ? track.lastError ?? "" : "",
                    actions: Actions.shown(track))
            }
        }
        if let counts = report?.counts {
            self.counts = ["queued": counts.queued, "uploading": counts.uploading, "interrupted": counts.interrupted, "failed": counts.failed]
        }
    }

    /// The changes from `old` to this, as the page's script reads them (one JSON object).
    func update(from old: LiveState) -> String? {
        struct Update: Encodable {
            var t: [[String]] = []
            var g: [[String]] = []
            var q: [String: Int]?
        }
        var update = Update()
        for (path, row) in rows where old.rows[path] != row {
            let icon = row.icon
            update.t.append([path, icon.name, icon.glyph ?? "", icon.spoken, row.url, row.error, row.actions.joined(separator: " ")])
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

/// Follows the store through the session (its track-state observation sees other processes'
/// commits too) and hands every open page the newest state. It also owns the uploads and
/// downloads the pages started, so a stop cancels them the way Ctrl-C stops a push.
final class LiveFeed: Service, Sendable {
    let library: Library
    private let subscribers = Mutex<[UUID: AsyncStream<LiveState>.Continuation]>([:])
    private let latest = Mutex(LiveState())
    private let closed = Mutex(false)
    private let actions = Mutex<[UUID: Task<Void, Never>]>([:])

    init(library: Library) {
        self.library = library
    }

    /// The newest state now and after each change, until the server stops.
    func subscribe() -> AsyncStream<LiveState> {
        let (stream, continuation) = AsyncStream<LiveState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let isClosed = closed.withLock { closed in
            if !closed { subscribers.withLock { $0[id] = continuation } }
            return closed
        }
        if isClosed {
            continuation.finish()
            return stream
        }
        continuation.yield(latest.withLock { $0 })
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
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
        let (ticks, tick) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask {
                // A failure to read is said by the page's state staying put; the stream ends.
                do { for try await _ in session.trackStates() { tick.yield() } } catch {}
            }
            group.addTask {
                do { for try await _ in session.queueReports() { tick.yield() } } catch {}
            }
            group.addTask { [self] in
                for await _ in ticks.cancelOnGracefulShutdown() {
                    publish()
                    // At most ten states a second: a big push commits far more often.
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

    private func publish() {
        guard let groups = try? library.groups() else { return }
        let session = library.session
        let state = LiveState(groups: groups, report: try? session.queueReport()) { session.publicURL(for: $0) }
        latest.withLock { $0 = state }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(state) }
    }

    /// Ends every page's stream and cancels the server's uploads, then waits for them.
    private func stop() {
        closed.withLock { $0 = true }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
        for task in actions.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// Waits for the uploads the pages started to end (after ``stop()`` cancelled them).
    func drain() async {
        while let task = actions.withLock({ $0.values.first }) {
            await task.value
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The server-sent events of one page: every change, as `event: state`.
    func events() -> ResponseBody {
        let states = subscribe()
        return ResponseBody { writer in
            var shown = LiveState()
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            for await state in states {
                guard let update = state.update(from: shown) else { continue }
                shown = state
                try await writer.write(ByteBuffer(string: "event: state\ndata: \(update)\n\n"))
            }
            try await writer.finish(nil)
        }
    }
}
