import Foundation
import Synchronization
public import R2UpModel
import R2UpStore
import R2UpTransfer

/// r2up for an app: a session uploads files to one bucket, keeps the queue, the track states and
/// the history in one database, and tells what happens as it happens.
///
/// Made from plain values (``Configuration``), it reads no environment variable and no file.
/// ``push(_:prefix:onlyFailed:)`` goes through the same queue, rules and guards as the `r2up push`
/// command; ``events`` and ``trackStates(under:)`` are `AsyncSequence`s an interface follows.
public final class R2UpSession: Sendable {
    /// The values the session was made from.
    public let configuration: Configuration
    let service: UploadService
    let store: Store
    private let subscribers = Mutex<[UUID: AsyncStream<R2UpEvent>.Continuation]>([:])

    /// Checks every value, then opens (or creates) the database. Nothing is sent; nothing is
    /// written when a value is refused.
    /// - Throws: `ConfigurationError` naming the value that is wrong (never the secret's value):
    ///   an endpoint that is not an http(s) URL, an empty or invalid bucket, a secret with a
    ///   control character, a database path whose folder is missing or read-only, a database
    ///   r2up cannot open.
    public init(_ configuration: Configuration) throws(ConfigurationError) {
        self.configuration = configuration
        let service = try UploadService(configuration: configuration, options: RunOptions())
        try configuration.checkDatabasePath()
        do {
            store = try Store(path: configuration.databasePath)
        } catch {
            throw .invalidValue(
                setting: "the database path", value: TextColumns.printable(configuration.databasePath),
                reason: Diagnosis(error).message)
        }
        self.service = service
    }

    /// Closes the database's idle read connections and empties their page caches: what a
    /// long-running app (a server, once its requests stop) no longer needs after a burst of
    /// reads. Waits for the reads under way; the next read opens a connection again.
    public func releaseMemory() { store.releaseMemory() }

    /// The bucket's public URL of `key` (the configured public base, or a path-style URL).
    public func publicURL(for key: String) -> String { service.publicURL(for: key) }

    // MARK: - Events

    /// What happens in this session's pushes from now on. Each access makes a new
    /// subscription; events are delivered to it in order, on the iterating task (never on the
    /// transfer or the store's thread). A subscriber that falls far behind loses the oldest
    /// events first.
    public var events: AsyncStream<R2UpEvent> {
        let (stream, continuation) = AsyncStream<R2UpEvent>.makeStream(bufferingPolicy: .bufferingNewest(Self.eventBuffer))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Events kept for a subscriber that is not reading.
    static let eventBuffer = 10_000

    /// How often progress is reported for a file in flight.
    static let progressInterval = Duration.milliseconds(250)

    func emit(_ event: R2UpEvent) {
        // A yield only appends to the stream's buffer: nothing of the app runs here.
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    // MARK: - Push

    /// Uploads files (and folders' tracks not uploaded yet), as `r2up push` does: the files
    /// are queued in the store first, so a push that is cancelled or dies is resumed by the
    /// next one. Cancelling the calling task stops it the way Ctrl-C stops the command.
    /// - Parameters:
    ///   - paths: files or folders; a folder's keys are the paths inside it.
    ///   - prefix: put before each key, e.g. `albums/2026/`.
    ///   - onlyFailed: for folders, only the tracks whose last upload failed (seed 000's
    ///     "Retry Failed Uploads"; `r2up push DIR --retry-failed`).
    /// - Returns: what completed and what failed; ``events`` told it as it happened.
    @discardableResult
    public func push(_ paths: [String], prefix: String? = nil, onlyFailed: Bool = false) async -> PushResult {
        var result = PushResult()
        defer { emit(.finished(result)) }
        func fail(_ failure: R2UpFailure) {
            result.failures.append(failure)
            result.category = max(result.category, failure.category)
            emit(.failed(failure))
        }
        if let prefix, let problem = ObjectKey.prefixProblem(prefix) {
            fail(R2UpFailure(path: nil, message: "the prefix '\(prefix)' is not valid: \(problem)", category: .badInput))
            return result
        }
        var request = PushRunner.Request(paths: paths)
        request.prefix = prefix
        request.onlyFailed = onlyFailed
        let files = KnownFiles()
        let progress = TransferProgress()
        let reporter = reportProgress(of: progress, files: files)
        defer { reporter.cancel() }
        let summary: PushRunner.Summary
        do {
            summary = try await PushRunner(store: store, service: service).run(
                request, progress: progress,
                onNotice: { notice in for failure in Self.failures(of: notice) { fail(failure) } },
                onEvent: { [self] event in handle(event, files: files) })
        } catch {
            fail(R2UpFailure(path: nil, message: error.diagnosis.message, category: error.diagnosis.category))
            return result
        }
        let run = summary.run
        result.completed = run.completed
        result.leftQueued = run.leftResumable
        if let stop = run.stoppedBy {
            fail(R2UpFailure(path: nil, message: stop.diagnosis.message, category: stop.diagnosis.category))
        } else if run.interrupted, let line = RunEnding.line(
            stoppedBy: nil, interrupted: true, leftResumable: run.leftResumable, resume: "push again")
        {
            fail(R2UpFailure(path: nil, message: line, category: .interrupted))
        }
        // Each file's failure was said as it happened.
        result.category = max(result.category, summary.category)
        return result
    }

    /// Progress events from the run's byte counts, read on a clock of their own: the transfer
    /// thread only stores a number, as it does for the CLI's progress bars.
    private func reportProgress(of progress: TransferProgress, files: KnownFiles) -> Task<Void, Never> {
        Task.detached { [weak self] in
            var sent: [UUID: Int64] = [:]
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.progressInterval)
                guard let self else { return }
                for active in progress.snapshot().active where active.sent != (sent[active.id] ?? 0) {  // 0 is what `started` said
                    sent[active.id] = active.sent
                    guard let file = files.value.withLock({ $0[active.id] }) else { continue }
                    emit(.progress(file, bytesSent: active.sent))
                }
            }
        }
    }

    /// What the push runner said a user should read, as failures (a folder with nothing to
    /// push is not one).
    static func failures(of notice: PushRunner.Notice) -> [R2UpFailure] {
        switch notice {
        case .nothingToPush:
            return []
        case .skipped(let skipped):
            return [R2UpFailure(path: skipped.path, message: "\(skipped.path): \(skipped.message)", category: skipped.category)]
        case .moveRefused(let diagnosis), .notQueued(let diagnosis):
            return [R2UpFailure(path: nil, message: diagnosis.message, category: diagnosis.category)]
        case .heldByOtherRun(let pid, let paths):
            return paths.map {
                R2UpFailure(path: $0, message: "\($0): another r2up (pid \(pid)) is uploading it", category: .locked)
            }
        case .conflict(let conflict):
            return [R2UpFailure(path: conflict.path, message: conflict.diagnosis.message, category: .uploadFailed)]
        }
    }

    /// Turns the queue's report of a job into the app's events (on whichever thread reported it:
    /// only yields happen here).
    private func handle(_ event: QueueEvent, files: KnownFiles) {
        func file(_ job: UploadJob) -> UploadFile {
            files.value.withLock { known in
                if let file = known[job.id] { return file }
                let file = UploadFile(id: job.id, path: job.path, key: job.key, size: job.length)
                known[job.id] = file
                return file
            }
        }
        /// A file's queued event, once, before anything else of it: a small file may start before
        /// its feed reports it queued. Under the lock, so the two reports cannot interleave.
        func queued(_ job: UploadJob, then: (UploadFile) -> Void = { _ in }) {
            files.value.withLock { known in
                let file = known[job.id] ?? UploadFile(id: job.id, path: job.path, key: job.key, size: job.length)
                if known.updateValue(file, forKey: job.id) == nil {
                    emit(.queued(file))
                    emit(.jobStateChanged(file, .staged))
                }
                then(file)
            }
        }
        switch event {
        case .queued(let job):
            queued(job)
        case .started(let job):
            queued(job) { file in
                emit(.started(file))
                emit(.jobStateChanged(file, job.state))
                emit(.trackStateChanged(path: job.path, job.trackState(heldByRun: true)))
            }
        case .completed(let job, let item, _):
            let file = file(job)
            emit(.jobStateChanged(file, job.state))
            emit(.trackStateChanged(path: job.path, job.trackState()))
            emit(.completed(file, item))
        case .failed(let job, let diagnosis, let next):
            let file = file(job)
            emit(.jobStateChanged(file, job.state))
            emit(.trackStateChanged(path: job.path, job.trackState()))
            emit(.failed(R2UpFailure(path: job.path, message: diagnosis.message, category: diagnosis.category, nextAttemptAt: next)))
        }
    }

    // MARK: - Track states and reports

    /// The tracks r2up knows under `folder` (nil: every one), by path, each state following its
    /// file as `r2up status` shows it, now and after each change: this process's commits are seen at once, another process's (a cron `sync`, a
    /// `push` in another terminal) within a quarter of a second. The same states are not
    /// delivered twice; a newer value replaces one not yet read. The sequence throws an
    /// ``R2UpFailure`` when the database cannot be read; ending the iteration stops it.
    public func trackStates(under folder: String? = nil) -> AsyncThrowingStream<[TrackStatus], any Error> {
        let records = store.observeTracks(under: folder.map(FilePath.absolute))
        let (stream, continuation) = AsyncThrowingStream<[TrackStatus], any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relay = Task {
            do {
                // Each state follows its file as `r2up status` does (a file changed since its
                // upload is not uploaded): one stat per track, here, off the store's threads.
                for try await tracks in records { continuation.yield(TrackScan.following(tracks).map(TrackStatus.init)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: R2UpFailure(error))
            }
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }

    /// The tracks under `folder` as `r2up status FOLDER` shows them, by path: every file a push
    /// of the folder would take (one r2up does not know yet is `localOnly`) and every known
    /// track, each state following its file. Without a folder: every track r2up knows.
    public func tracks(under folder: String? = nil) throws(R2UpFailure) -> [TrackStatus] {
        do {
            guard let folder else { return TrackScan.following(try store.tracks(under: "/")).map(TrackStatus.init) }
            return try TrackScan.tracks(under: FilePath.absolute(folder), store: store).map(TrackStatus.init)
        } catch { throw R2UpFailure(error) }
    }

    /// A group's summary (seed 000's header: "↑ 12/18") of `tracks`.
    public func summary(of tracks: [TrackStatus]) -> GroupSummary {
        GroupSummary(states: tracks.map(\.uploadState))
    }

    /// The latest uploads, newest first (seed 002's history).
    public func history(limit: Int = 100) throws(R2UpFailure) -> [UploadItem] {
        do { return try store.recentUploads(limit: limit) } catch { throw R2UpFailure(error) }
    }

    /// The queue as `r2up queue` shows it (seed 003's HUD): counts, uploading, up next, failed.
    public func queueReport() throws(R2UpFailure) -> QueueReport {
        do { return try QueueReport(store: store) } catch { throw R2UpFailure(error) }
    }

    /// ``queueReport()`` now and after each change of the queue, by this process or another
    /// one (seen as ``trackStates(under:)`` sees changes; bytes sent move about once a second).
    /// A newer report replaces one not yet read; the sequence throws an ``R2UpFailure`` when
    /// the database cannot be read.
    public func queueReports() -> AsyncThrowingStream<QueueReport, any Error> {
        let jobs = store.observeJobs()
        let store = store
        let (stream, continuation) = AsyncThrowingStream<QueueReport, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relay = Task {
            do {
                for try await _ in jobs { continuation.yield(try QueueReport(store: store)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: R2UpFailure(error))
            }
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }
}

/// The files of a push by job id, for its progress events.
final class KnownFiles: Sendable {
    let value = Mutex<[UUID: UploadFile]>([:])
}
