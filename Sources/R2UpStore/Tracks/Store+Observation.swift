import Foundation
import Synchronization
internal import GRDB
public import R2UpModel

extension Store {
    /// The tracks under `folder` (nil: every track), by path: the current rows first, then
    /// again each time they change. This process's commits are seen at once (GRDB's
    /// `ValueObservation` on this store's pool); another process's (a cron `sync`, a `push` in
    /// another terminal) within `pollInterval`, through `PRAGMA data_version` read on a
    /// connection of its own. Values are delivered on a queue of the observation's own, never
    /// on the store's writer or the transfer thread; the same rows are not delivered twice.
    /// The stream ends with an error when the database cannot be read; ending the iteration
    /// stops the observation.
    public func observeTracks(
        under folder: String?, pollInterval: Duration = .milliseconds(250)
    ) -> AsyncThrowingStream<[TrackRecord], any Error> {
        let range = folder.map(Self.pathRange)
        let now = self.now
        return observe(pollInterval: pollInterval) { db in
            var tracks =
                if let range {
                    try TrackRecord.fetchAll(
                        db, sql: "SELECT * FROM tracks WHERE path >= ? AND path < ? ORDER BY path", arguments: [range.low, range.high])
                } else {
                    try TrackRecord.fetchAll(db, sql: "SELECT * FROM tracks ORDER BY path")
                }
            let time = now()
            for index in tracks.indices where tracks[index].uploadState == .uploading {
                try Self.checkLiveness(db, &tracks[index], now: time)
            }
            return tracks
        }
    }

    /// The jobs not completed, by creation, now and after each change, as `observeTracks`
    /// sees changes (a queue view rebuilds its report from them).
    public func observeJobs(pollInterval: Duration = .milliseconds(250)) -> AsyncThrowingStream<[UploadJob], any Error> {
        observe(pollInterval: pollInterval) { db in
            try UploadJob.fetchAll(db, sql: "SELECT * FROM jobs WHERE state != 'completed' ORDER BY createdAt, id")
        }
    }

    /// A number now and again after each commit to the database, by any connection of this
    /// process or another one (a cron `sync`, a `push` in another terminal), seen within
    /// `pollInterval`: `PRAGMA data_version` read on a read-only connection of its own, which
    /// every other connection's commit moves. Nothing else is read or held, so one watcher
    /// costs a query a poll however big the library; the stream ends with an error when the
    /// database cannot be read, and ending the iteration stops it.
    public func observeCommits(pollInterval: Duration = .milliseconds(100)) -> AsyncThrowingStream<Int, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let count = Mutex(0)
        let poller = Self.pollCommits(path: path, label: "r2up.commits", every: pollInterval) { _ in
            continuation.yield(count.withLock { value in
                defer { value += 1 }
                return value
            })
        } failed: { error in
            continuation.finish(throwing: error)
        }
        continuation.onTermination = { _ in poller.cancel() }
        return stream
    }

    /// `fetch`'s value now and after each change of what it read: at once for this pool's
    /// commits, within `pollInterval` for other connections' (`PRAGMA data_version`).
    private func observe<Value: Equatable & Sendable>(
        pollInterval: Duration, _ fetch: @escaping @Sendable (Database) throws -> Value
    ) -> AsyncThrowingStream<Value, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let path = self.path
        let last = Mutex<Value?>(nil)
        let send: @Sendable (Value) -> Void = { value in
            let changed = last.withLock { previous in
                guard previous != value else { return false }
                previous = value
                return true
            }
            if changed { continuation.yield(value) }
        }
        let queue = DispatchQueue(label: "r2up.observation")
        let cancellable = ValueObservation.tracking(fetch).start(
            in: pool, scheduling: .async(onQueue: queue),
            onError: { error in continuation.finish(throwing: StoreError.wrap(error, path: path)) },
            onChange: send)
        // Another process's commits: `data_version` moves on this connection when any other
        // connection (in any process) commits.
        let pool = self.pool
        let poller = Self.pollCommits(path: path, label: "r2up.data-version", every: pollInterval) { first in
            guard !first else { return }
            let value = try await pool.read(fetch)
            queue.async { send(value) }
        } failed: { error in
            continuation.finish(throwing: error)
        }
        continuation.onTermination = { _ in
            cancellable.cancel()
            poller.cancel()
        }
        return stream
    }

    /// Reads `PRAGMA data_version` every `interval` on a read-only connection of its own (which
    /// any other connection's commit moves) and calls `changed` at the first read (`true`) and
    /// after each move (`false`); a failure to open or read ends the loop through `failed`.
    private static func pollCommits(
        path: String, label: String, every interval: Duration,
        changed: @escaping @Sendable (_ first: Bool) async throws -> Void,
        failed: @escaping @Sendable (StoreError) -> Void
    ) -> Task<Void, Never> {
        Task.detached {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.label = label
            let watcher: DatabaseQueue
            do { watcher = try DatabaseQueue(path: path, configuration: configuration) } catch {
                failed(StoreError.wrap(error, path: path))
                return
            }
            var seen: Int?
            while !Task.isCancelled {
                do {
                    let version = try await watcher.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
                    if seen == nil || version != seen { try await changed(seen == nil) }
                    seen = version
                } catch {
                    failed(StoreError.wrap(error, path: path))
                    return
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// The `path` range of a folder's tracks on the UNIQUE(path) index: "dir/" ≤ path < "dir0".
    static func pathRange(_ folder: String) -> (low: String, high: String) {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        return (prefix + "/", prefix + "0")
    }
}
