public import Foundation
public import GRDB
public import R2UpModel
public import R2UpStore

/// A folder under the temp directory, removed when the value goes.
public final class ScratchFolder: Sendable {
    public let path: String

    public init() throws {
        path = FileManager.default.temporaryDirectory.path + "/r2up-store-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        // Make any folder a test locked writable again so it can be removed.
        if let items = FileManager.default.enumerator(atPath: path) {
            for case let item as String in items { chmod(path + "/" + item, 0o700) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// A store at `name` in this folder, on a clock the test controls.
    public func store(_ name: String = "r2up.sqlite", clock: TestClock = TestClock()) throws -> Store {
        try Store(path: file(name), now: { clock.now })
    }
}

/// A clock that moves only when told to.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// Whole seconds: the store keeps dates to the millisecond.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = start
    }

    public var now: Date { lock.withLock { current } }

    public func advance(_ seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }
}

/// Sample rows.
public enum Sample {
    public static let date = Date(timeIntervalSince1970: 1_750_000_000)

    public static func item(
        _ name: String = "track.flac", key: String? = nil, size: Int64 = 2_500_000, at date: Date = date,
        etag: String? = "\"abc\"", id: UUID = UUID()
    ) -> UploadItem {
        let key = key ?? "music/\(name)"
        return UploadItem(
            id: id, fileName: name, fileSize: size, r2Key: key, uploadDate: date,
            publicURL: URL(string: "https://pub.example.com/\(key)")!, bucket: "tracks", etag: etag)
    }

    public static func job(
        _ path: String = "/music/album/01.flac", key: String = "album/01.flac", length: Int64 = 20 << 20,
        mtimeNs: Int64 = 1_700_000_000_000_000_000, at date: Date = date
    ) -> UploadJob {
        UploadJob(
            path: path, bucket: "tracks", key: key, contentType: "audio/flac", length: length, mtimeNs: mtimeNs,
            partSize: 8 << 20, createdAt: date)
    }
}

extension Store {
    /// Raw SQL for checks the public API does not offer.
    public func rawRead<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    public func rawWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.write(body)
    }
}

extension Store {
    /// Test set-up: a job changed and saved the way a run saves it (`saveJob`).
    @discardableResult
    public func updateJob(id: UUID, _ change: (inout UploadJob) -> Void) throws -> UploadJob {
        guard var job = try job(id: id) else { throw StoreError.notFound("job \(id)") }
        change(&job)
        try saveJob(job, trackState: job.trackState(), trackError: job.lastError)
        guard let saved = try self.job(id: id) else { throw StoreError.notFound("job \(id)") }
        return saved
    }

    /// Test set-up: publishes the stored job as a run does, its machine driven to completed
    /// first (`UploadJob.driven(to:)`); the store only records what the machine answered.
    @discardableResult
    public func completeJob(id: UUID, historyItem: UploadItem) throws -> UploadJob {
        guard let job = try job(id: id) else { throw StoreError.notFound("job \(id)") }
        return try completeJob(job.driven(to: .completed), historyItem: historyItem)
    }
}

extension UploadJob {
    /// Test set-up: the job as its machine leaves it after the steps a run takes, as far as
    /// `target` (a single PUT for a staged job; a resume for one with an upload id): started,
    /// body sent, verified. Stops where the machine refuses.
    public func driven(to target: UploadJobState) -> UploadJob {
        var machine = machine()
        while machine.state != target {
            let before = machine.state
            switch machine.state {
            case .staged, .initiated, .failedRetryable: _ = machine.start(multipart: uploadID != nil)
            case .uploading: _ = machine.bodySent()
            case .verifying: _ = machine.verified()
            case .completed, .failedPermanent: break
            }
            if machine.state == before { break }
        }
        var job = self
        job.apply(machine)
        return job
    }
}

extension ProcessIdentity {
    /// A process that has ended: a child that exited and was reaped.
    public static func ended() throws -> ProcessIdentity {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        let pid = process.processIdentifier
        return ProcessIdentity(pid: pid, startTime: 1)
    }
}
