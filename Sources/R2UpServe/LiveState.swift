import Foundation
import R2UpKit
import Synchronization

/// What the pages show that can change: each track's icon, each group's summary, the queue's
/// counts. One copy for every open page: a row holds its state and key, and its URL and actions
/// are made only for an update that carries it.
struct LiveState: Sendable, Equatable {
    struct Row: Sendable, Equatable {
        var icon: TrackIcon
        var key: String?
        var error: String?
        /// Percent of an upload sent, while the track is uploading and its job says.
        var progress: Int?
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
        let progress = Self.progress(report)
        for group in groups {
            headers[group.id] = Header(summary: group.summary, actions: Actions.shown(group))
            for track in group.tracks { rows[track.path] = Self.row(track, progress: progress[track.path]) }
        }
        if let counts = report?.counts {
            self.counts = ["queued": counts.queued, "uploading": counts.uploading, "interrupted": counts.interrupted, "failed": counts.failed]
        }
    }

    static func row(_ track: TrackStatus, progress: Int?) -> Row {
        let failed = track.icon == .uploadError || track.icon == .downloadError
        return Row(icon: track.icon, key: track.key, error: failed ? track.lastError : nil, progress: track.icon == .uploading ? progress : nil)
    }

    /// The percent sent of each upload under way, by path (the queue's report).
    static func progress(_ report: QueueReport?) -> [String: Int] {
        var percents: [String: Int] = [:]
        for entry in report?.uploading ?? [] where entry.size > 0 {
            percents[entry.path] = Int(min(100, max(0, entry.bytesSent * 100 / entry.size)))
        }
        return percents
    }

    /// Whether a page shows the same: everything but the version.
    func shows(_ other: LiveState) -> Bool { rows == other.rows && headers == other.headers && counts == other.counts }

    /// The changes from `old` to this, as the page's script reads them (one JSON object).
    /// `reshaped`: tracks or groups came or went, so a Library page lays itself out again (`n`).
    func update(from old: LiveState, reshaped: Bool = false, publicURL: (String) -> String) -> String? {
        struct Update: Encodable {
            var t: [[String]] = []
            var g: [[String]] = []
            var q: [String: Int]?
            var n: Int?
        }
        var update = Update()
        if reshaped { update.n = 1 }
        for (path, row) in rows where old.rows[path] != row {
            let icon = row.icon
            let actions = Actions.shown(icon: icon, inCloud: row.key != nil).joined(separator: " ")
            update.t.append([
                path, icon.name, icon.glyph ?? "", icon.spoken, row.key.map(publicURL) ?? "", row.error ?? "", actions,
                row.progress.map(String.init) ?? "",
            ])
        }
        for (id, header) in headers where old.headers[id] != header {
            let summary = header.summary
            update.g.append([id, summary.label(ascii: false), summary.name ?? "none", summary.spoken, header.actions.joined(separator: " ")])
        }
        if counts != old.counts { update.q = counts }
        guard !update.t.isEmpty || !update.g.isEmpty || update.q != nil || reshaped else { return nil }
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
        /// The rows whose upload progress the last state showed.
        var progressing: Set<String> = []
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
        let report = try? session.queueReport()
        var state = LiveState(groups: view.groups, report: report)
        let old = latest.withLock { $0.state }
        guard !state.shows(old) else {
            // The same rows, kept from this read: the snapshot holds its paths and keys, and the
            // last read's copies (4 MiB for 20,000 tracks) are freed instead of kept here.
            state.version = old.version
            latest.withLock { latest in if latest.state.version == old.version { latest.state = state } }
            return old.version
        }
        state.version = old.version + 1
        // None for the first state: a page that showed nothing of the feed's gets every row.
        let reshaped = state.rows.count != old.rows.count || state.headers.count != old.headers.count
            || state.headers.keys.contains { old.headers[$0] == nil } || state.rows.keys.contains { old.rows[$0] == nil }
        let update = old.version == 0 ? nil : state.update(from: old, reshaped: reshaped) { session.publicURL(for: $0) }
        latest.withLock { latest in
            latest.state = state
            latest.progressing = Set(LiveState.progress(report).keys)
            if old.version > 0 { latest.recent.append((state.version, update)) }
            if latest.recent.count > Latest.kept { latest.recent.removeFirst(latest.recent.count - Latest.kept) }
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(state.version) }
        return state.version
    }

    /// The state with the rows and headers of a few changed tracks and groups (of ``LibrarySnapshot/apply(_:library:)``)
    /// and the queue's counts: a new version when the pages would show something else, the
    /// update made from these alone, not from the whole library. Reads come one at a time.
    func absorb(tracks: [TrackStatus], groups: [TrackGroup<TrackStatus>], report: QueueReport?) -> Int {
        let fresh = LiveState(groups: [], report: report)
        let progress = LiveState.progress(report)
        var new = LiveState()
        var old = LiveState()
        let version = latest.withLock { latest in
            let state = latest.state
            func put(_ path: String, _ row: LiveState.Row) {
                if state.rows[path] != row { (new.rows[path], old.rows[path]) = (row, state.rows[path]) }
            }
            for track in tracks { put(track.path, LiveState.row(track, progress: progress[track.path])) }
            // An upload's progress moves without its track's row: the rows that show one, or should.
            for path in latest.progressing.union(progress.keys) where new.rows[path] == nil {
                guard var row = state.rows[path] else { continue }
                row.progress = row.icon == .uploading ? progress[path] : nil
                put(path, row)
            }
            for group in groups {
                let header = LiveState.Header(summary: group.summary, actions: Actions.shown(group))
                if state.headers[group.id] != header { (new.headers[group.id], old.headers[group.id]) = (header, state.headers[group.id]) }
            }
            if report != nil, fresh.counts != state.counts { (new.counts, old.counts) = (fresh.counts, state.counts) }
            return state.version
        }
        guard version > 0, let update = new.update(from: old, publicURL: { session.publicURL(for: $0) }) else { return version }
        latest.withLock { latest in
            for (path, row) in new.rows { latest.state.rows[path] = row }
            for (id, header) in new.headers { latest.state.headers[id] = header }
            if !new.counts.isEmpty { latest.state.counts = new.counts }
            latest.progressing = Set(progress.keys)
            latest.state.version = version + 1
            latest.recent.append((version + 1, update))
            if latest.recent.count > Latest.kept { latest.recent.removeFirst(latest.recent.count - Latest.kept) }
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(version + 1) }
        return version + 1
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

