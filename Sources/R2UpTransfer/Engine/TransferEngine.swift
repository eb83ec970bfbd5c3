internal import CCurl
import Foundation
import R2UpModel
import SigV4
import Synchronization

/// Runs HTTP transfers with libcurl's multi interface on one dedicated thread.
///
/// All easy handles share the multi handle's connection cache, so a connection
/// to the endpoint is opened once and reused. Tasks await `perform`; cancelling
/// the task removes its transfer at once.
///
/// The engine is also a `TaskExecutor`: tasks that prefer it run on the engine thread between
/// two turns of the curl loop, the way `curl --parallel` does all its work on one thread. A
/// small file's task then signs, sends and resumes without any thread hand-off (each was a
/// futex wake and a context switch, a third of a small-file push's CPU). Keep long CPU work
/// (hashing big parts) off it: while a task runs, no transfer moves.
public final class TransferEngine: TaskExecutor, Sendable {
    /// Network settings that apply to every transfer.
    public struct Options: Sendable {
        public var connectTimeoutMilliseconds = 10_000
        /// A transfer slower than this many bytes a second for `lowSpeedTimeSeconds` is aborted.
        public var lowSpeedLimitBytesPerSecond = 1
        public var lowSpeedTimeSeconds = 30
        /// A PEM file of trusted CAs, instead of the system's; nil uses libcurl's built-in one. Verification is never off.
        public var caBundle: String?
        public var userAgent = "r2up/0.1"
        /// The most curl's upload buffer takes (`DepthController.bufferCap`).
        public var uploadBufferSize = Int(DepthController.bufferCap)
        /// Connections kept open for reuse.
        public var maxConnections = 16
        /// Connections idle this long are closed: no request reuses one older (curl's
        /// `CURLOPT_MAXAGE_CONN`), and once no transfer has run for this long the engine closes
        /// every cached one, which curl does only when a new request comes. A daemon (`watch`,
        /// `serve`) then holds no sockets between bursts; within a burst they stay in use.
        /// Whole seconds for curl's limit (at least 1); nil keeps curl's 118 s and the cache.
        public var idleConnectionMilliseconds: Int? = 30_000
        /// Total rate across all transfers (request and response bodies), bytes a second; nil is unlimited.
        public var bandwidthLimit: Int64?
        /// When set, each transfer's low-speed limit and largest upload buffer are read here as it
        /// starts (the run's slots keep them in step with the depth and the measured link),
        /// instead of `lowSpeedLimitBytesPerSecond` and `uploadBufferSize` alone.
        public var tuning: TransferTuning?

        public init() {}
    }

    struct Submission {
        let id: UInt64
        let request: HTTPRequest
        let continuation: CheckedContinuation<HTTPResponse, any Error>
    }

    private struct Inbox {
        var nextID: UInt64 = 1
        var submissions: [Submission] = []
        var cancellations: Set<UInt64> = []
        var stopping = false
        /// The loop is in (or about to enter) its wait for sockets: only then does a submission need a wakeup.
        var polling = false
        /// Task jobs to run on the engine thread.
        var jobs: [UnownedJob] = []
        /// The loop has ended; a late job then runs on a thread of its own.
        var finished = false
    }

    public let options: Options
    /// Finished transfers' handles kept for reuse, at most.
    static let idleHandleLimit = 64
    private let inbox = Mutex(Inbox())
    /// The loop's wake pipe and socket set: other threads only `wake`.
    private let descriptors: EngineDescriptors
    /// The engine thread, once it runs (tests check that tasks run there).
    private let loopThread = Mutex<pthread_t?>(nil)

    /// Whether the caller runs on the engine thread.
    var isEngineThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    public init(options: Options = Options()) throws(TransferError) {
        guard CurlRuntime.initialized else {
            throw TransferError(kind: .other, message: "libcurl could not be initialised")
        }
        // The loop owns the multi handle from here (it makes a new one to close idle connections).
        let pointer = try EngineLoop.makeMulti(options)
        guard let descriptors = EngineDescriptors() else {
            curl_multi_cleanup(pointer)
            throw TransferError(kind: .other, message: "the transfer engine could not open its wake pipe")
        }
        self.options = options
        self.descriptors = descriptors
        // TLS sessions and DNS answers shared by every handle: a connection opened when the depth
        // grows resumes the TLS session instead of a full handshake. Only the engine thread uses
        // the handles, so the share needs no locks.
        let share = curl_share_init()
        if let share {
            _ = r2_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
            _ = r2_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        }
        let loop = EngineLoop(multi: pointer, share: share, options: options, descriptors: descriptors)
        let thread = Thread { [self] in
            loopThread.withLock { $0 = pthread_self() }
            loop.run(engine: self)
        }
        thread.name = "r2up.transfer"
        thread.start()
    }

    deinit {
        // The loop holds a strong reference until stop, so deinit only runs after it ended (and
        // cleaned up its multi handle).
        descriptors.closeAll()
    }

    /// Performs one HTTP exchange. Throws `TransferError` when no response came,
    /// `CancellationError` when the task was cancelled.
    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = withInbox { inbox -> UInt64 in
            defer { inbox.nextID += 1 }
            return inbox.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let accepted = withInbox { inbox -> Bool? in
                    guard !inbox.stopping else { return nil }
                    inbox.submissions.append(Submission(id: id, request: request, continuation: continuation))
                    // A cancel that raced ahead of the submission is replayed here.
                    if Task.isCancelled { inbox.cancellations.insert(id) }
                    defer { inbox.polling = false }
                    return inbox.polling
                }
                if let wake = accepted {
                    // A busy loop takes the inbox on its next turn; a wakeup costs two syscalls.
                    if wake { descriptors.wake() }
                } else {
                    continuation.resume(throwing: TransferError(kind: .cancelled, message: "the transfer engine has stopped"))
                }
            }
        } onCancel: {
            withInbox { _ = $0.cancellations.insert(id) }
            descriptors.wake()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unownedJob = UnownedJob(job)
        let wake = withInbox { inbox -> Bool? in
            guard !inbox.finished else { return nil }
            inbox.jobs.append(unownedJob)
            defer { inbox.polling = false }
            return inbox.polling
        }
        switch wake {
        case true?: descriptors.wake()
        case false?: break
        case nil:
            // The loop is gone (a task outlived its service): run the job on a thread of its own.
            Thread.detachNewThread { [self] in unownedJob.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Makes the loop take another turn (a held body's gate decided: `BodyGate`).
    func wakeLoop() { descriptors.wake() }

    /// Ends the engine thread once running transfers are done; new ones are refused.
    public func shutdown() {
        withInbox { $0.stopping = true }
        descriptors.wake()
    }

    /// The inbox under its lock, the hand-off told to ThreadSanitizer (`RaceDetector`).
    private func withInbox<T: Sendable>(_ body: (inout Inbox) -> T) -> T {
        inbox.withLock { inbox in RaceDetector.section(self) { body(&inbox) } }
    }

    /// Called by the loop before it polls: false when something arrived meanwhile, so it
    /// loops again instead; true means later submissions will wake it.
    func mayPoll() -> Bool {
        withInbox { inbox in
            guard inbox.submissions.isEmpty, inbox.cancellations.isEmpty, inbox.jobs.isEmpty else { return false }
            inbox.polling = true
            return true
        }
    }

    /// Runs the task jobs queued so far (they may queue requests and more jobs).
    func runJobs() {
        let jobs = withInbox { inbox in
            defer { inbox.jobs.removeAll(keepingCapacity: true) }
            return inbox.jobs
        }
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Called by a stopping loop with no transfer left: true (and no more jobs taken) when no job is queued.
    func finishIfIdle() -> Bool {
        withInbox { inbox in
            guard inbox.jobs.isEmpty, inbox.submissions.isEmpty else { return false }
            inbox.finished = true
            return true
        }
    }

    func takeInbox() -> (submissions: [Submission], cancellations: Set<UInt64>, stopping: Bool) {
        withInbox { inbox in
            defer {
                inbox.submissions.removeAll()
                inbox.cancellations.removeAll()
            }
            return (inbox.submissions, inbox.cancellations, inbox.stopping)
        }
    }
}

/// A token bucket for the shared bandwidth limit; a quarter second of burst.
///
/// It grants whole chunks of at least `minimumChunk` bytes (or what is wanted, when less):
/// granting whatever trickled in since the last call gave curl a few hundred bytes per
/// `send`, and a limited push cost many times the CPU of an unlimited one.
struct TokenBucket {
    static let minimumChunk = 16 << 10
    let rate: Int64
    /// The smallest grant: 16 KiB, or a 32nd of a second's worth at higher rates (up to 1 MiB),
    /// so the engine wakes some 32 times a second rather than for every few kilobytes.
    let chunk: Int
    private var tokens: Double
    private var last: UInt64
    /// A quarter second of the rate, and never less than one chunk (a very low limit still moves).
    private var capacity: Double { max(Double(rate) / 4, Double(chunk)) }

    init(rate: Int64, now: UInt64) {
        self.rate = rate
        chunk = Int(max(Int64(Self.minimumChunk), min(rate / 32, 1 << 20)))
        last = now
        tokens = 0
        tokens = capacity
    }

    mutating func take(_ wanted: Int, now: UInt64) -> Int {
        let elapsed = Double(now &- last) / 1e9
        last = now
        tokens = min(capacity, tokens + elapsed * Double(rate))
        guard tokens >= Double(min(wanted, chunk)) else { return 0 }
        let granted = min(wanted, Int(tokens))
        tokens -= Double(granted)
        return granted
    }

    /// How long until a chunk can be granted, for the engine's next wake-up.
    func wait(now: UInt64) -> Int32 {
        let elapsed = Double(now &- last) / 1e9
        let missing = Double(chunk) - min(capacity, tokens + elapsed * Double(rate))
        guard missing > 0 else { return 0 }
        return Int32(min(1000, (missing / Double(rate) * 1000).rounded(.up)))
    }
}
