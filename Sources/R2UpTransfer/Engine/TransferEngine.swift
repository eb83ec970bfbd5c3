internal import CCurl
import Foundation
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
        /// A PEM file of trusted CAs; nil uses the system store. Verification is never off.
        public var caBundle: String?
        public var userAgent = "r2up/0.1"
        public var uploadBufferSize = 512 * 1024
        /// Connections kept open for reuse.
        public var maxConnections = 16
        /// Total rate across all transfers (request and response bodies), bytes a second; nil is unlimited.
        public var bandwidthLimit: Int64?
        /// When set, each transfer's low-speed limit and largest upload buffer are read here as it
        /// starts (the run's slots keep them in step with the depth and the measured link),
        /// instead of `lowSpeedLimitBytesPerSecond` and `uploadBufferSize` alone.
        public var tuning: TransferTuning?

        public init() {}
    }

    fileprivate struct Submission {
        let id: UInt64
        let request: HTTPRequest
        let continuation: CheckedContinuation<HTTPResponse, any Error>
    }

    private struct Inbox {
        var nextID: UInt64 = 1
        var submissions: [Submission] = []
        var cancellations: Set<UInt64> = []
        var stopping = false
        /// The loop is in (or about to enter) `curl_multi_poll`: only then does a submission need a wakeup.
        var polling = false
        /// Task jobs to run on the engine thread.
        var jobs: [UnownedJob] = []
        /// The loop has ended; a late job then runs on a thread of its own.
        var finished = false
    }

    /// The multi handle. Off the engine thread only `curl_multi_wakeup` touches it,
    /// which libcurl documents as safe to call from any thread.
    private struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    public let options: Options
    /// Finished transfers' handles kept for reuse, at most.
    static let idleHandleLimit = 64
    private let inbox = Mutex(Inbox())
    private let multi: MultiHandle
    /// The engine thread, once it runs (tests check that tasks run there).
    private let loopThread = Mutex<pthread_t?>(nil)

    /// Whether the caller runs on the engine thread.
    var isEngineThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    public init(options: Options = Options()) throws(TransferError) {
        guard CurlRuntime.initialized, let pointer = curl_multi_init() else {
            throw TransferError(kind: .other, message: "libcurl could not be initialised")
        }
        self.options = options
        multi = MultiHandle(pointer: pointer)
        guard r2_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, options.maxConnections) == CURLM_OK else {
            curl_multi_cleanup(pointer)
            throw TransferError(kind: .other, message: "libcurl refused the connection limit \(options.maxConnections)")
        }
        // TLS sessions and DNS answers shared by every handle: a connection opened when the depth
        // grows resumes the TLS session instead of a full handshake. Only the engine thread uses
        // the handles, so the share needs no locks.
        let share = curl_share_init()
        if let share {
            _ = r2_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
            _ = r2_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        }
        let loop = EngineLoop(multi: pointer, share: share, options: options)
        let thread = Thread { [self] in
            loopThread.withLock { $0 = pthread_self() }
            loop.run(engine: self)
        }
        thread.name = "r2up.transfer"
        thread.start()
    }

    deinit {
        // The loop holds a strong reference until stop, so deinit only runs after it ended.
        curl_multi_cleanup(multi.pointer)
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
                    if wake { curl_multi_wakeup(multi.pointer) }
                } else {
                    continuation.resume(throwing: TransferError(kind: .cancelled, message: "the transfer engine has stopped"))
                }
            }
        } onCancel: {
            withInbox { _ = $0.cancellations.insert(id) }
            curl_multi_wakeup(multi.pointer)
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
        case true?: curl_multi_wakeup(multi.pointer)
        case false?: break
        case nil:
            // The loop is gone (a task outlived its service): run the job on a thread of its own.
            Thread.detachNewThread { [self] in unownedJob.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Ends the engine thread once running transfers are done; new ones are refused.
    public func shutdown() {
        withInbox { $0.stopping = true }
        curl_multi_wakeup(multi.pointer)
    }

    /// The inbox under its lock, the hand-off told to ThreadSanitizer (`RaceDetector`).
    private func withInbox<T: Sendable>(_ body: (inout Inbox) -> T) -> T {
        inbox.withLock { inbox in RaceDetector.section(self) { body(&inbox) } }
    }

    /// Called by the loop before it polls: false when something arrived meanwhile, so it
    /// loops again instead; true means later submissions will wake it.
    fileprivate func mayPoll() -> Bool {
        withInbox { inbox in
            guard inbox.submissions.isEmpty, inbox.cancellations.isEmpty, inbox.jobs.isEmpty else { return false }
            inbox.polling = true
            return true
        }
    }

    /// Runs the task jobs queued so far (they may queue requests and more jobs).
    fileprivate func runJobs() {
        let jobs = withInbox { inbox in
            defer { inbox.jobs.removeAll(keepingCapacity: true) }
            return inbox.jobs
        }
        for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Called by a stopping loop with no transfer left: true (and no more jobs taken) when no job is queued.
    fileprivate func finishIfIdle() -> Bool {
        withInbox { inbox in
            guard inbox.jobs.isEmpty, inbox.submissions.isEmpty else { return false }
            inbox.finished = true
            return true
        }
    }

    fileprivate func takeInbox() -> (submissions: [Submission], cancellations: Set<UInt64>, stopping: Bool) {
        withInbox { inbox in
            defer {
                inbox.submissions.removeAll()
                inbox.cancellations.removeAll()
            }
            return (inbox.submissions, inbox.cancellations, inbox.stopping)
        }
    }

    /// State that lives on the engine thread only.
    private final class EngineLoop: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
        let share: UnsafeMutableRawPointer?
        let options: Options
        var active: [UInt64: CurlTransfer] = [:]
        var byHandle: [UnsafeMutableRawPointer: UInt64] = [:]
        var unmatchedCancellations: Set<UInt64> = []
        var bucket: TokenBucket?
        var paused: [UInt64] = []
        /// Reset easy handles ready for the next transfer.
        var idleHandles: [UnsafeMutableRawPointer] = []

        init(multi: UnsafeMutableRawPointer, share: UnsafeMutableRawPointer?, options: Options) {
            self.multi = multi
            self.share = share
            self.options = options
            if let limit = options.bandwidthLimit, limit > 0 {
                bucket = TokenBucket(rate: limit, now: DispatchTime.now().uptimeNanoseconds)
            }
        }

        func run(engine: TransferEngine) {
            while true {
                engine.runJobs()
                let (submissions, cancellations, stopping) = engine.takeInbox()
                for submission in submissions { start(submission) }
                for id in cancellations.union(unmatchedCancellations) {
                    if let transfer = active[id] {
                        remove(transfer)
                        transfer.finish(throwing: CancellationError())
                        recycle(transfer.handle)
                        unmatchedCancellations.remove(id)
                    } else {
                        unmatchedCancellations.insert(id)
                    }
                }
                if active.isEmpty { unmatchedCancellations.removeAll() }

                var running: Int32 = 0
                _ = curl_multi_perform(multi, &running)
                collectFinished()
                if stopping && active.isEmpty && engine.finishIfIdle() {
                    releaseIdleHandles()
                    if let share { curl_share_cleanup(share) }
                    break
                }
                var timeout: Int32 = 1000
                if let bucket, !paused.isEmpty {
                    // Wake when a chunk's worth has come in, not on every tick.
                    let wait = bucket.wait(now: DispatchTime.now().uptimeNanoseconds)
                    if wait == 0 { resumePaused() }
                    timeout = max(1, wait)
                }
                if engine.mayPoll() { _ = curl_multi_poll(multi, nil, 0, timeout, nil) }
            }
        }

        private func start(_ submission: Submission) {
            // A finished transfer's handle is reused: curl_easy_init and curl_easy_cleanup for
            // every small file cost more than the request's own setup.
            guard let handle = idleHandles.popLast() ?? curl_easy_init() else {
                submission.continuation.resume(
                    throwing: TransferError(kind: .other, message: "libcurl could not create a transfer handle"))
                return
            }
            do {
                let transfer = try CurlTransfer(
                    id: submission.id, handle: handle, request: submission.request, options: options, share: share,
                    continuation: submission.continuation)
                if bucket != nil {
                    transfer.bandwidthGrant = { [unowned self, id = submission.id] wanted in
                        let granted = self.bucket!.take(wanted, now: DispatchTime.now().uptimeNanoseconds)
                        if granted == 0 { self.paused.append(id) }
                        return granted
                    }
                }
                let added = curl_multi_add_handle(multi, transfer.handle)
                guard added == CURLM_OK else {
                    // Never started: the caller gets an error, not a request that waits forever.
                    throw TransferError(
                        kind: .other, message: "libcurl could not start the request: \(String(cString: curl_multi_strerror(added)))")
                }
                active[submission.id] = transfer
                byHandle[transfer.handle] = submission.id
            } catch {
                recycle(handle)
                submission.continuation.resume(throwing: error)
            }
        }

        private func remove(_ transfer: CurlTransfer) {
            _ = curl_multi_remove_handle(multi, transfer.handle)
            active[transfer.id] = nil
            byHandle[transfer.handle] = nil
        }

        /// Resets a handle whose transfer is over (its results read) and keeps it for the next one.
        /// At most `idleHandleLimit` wait: each keeps its buffers (16 KiB to receive, up to the
        /// upload buffer), so a burst of hundreds in flight does not stay in memory after it.
        private func recycle(_ handle: UnsafeMutableRawPointer) {
            curl_easy_reset(handle)
            if idleHandles.count < max(4, min(TransferEngine.idleHandleLimit, options.maxConnections)) {
                idleHandles.append(handle)
            } else {
                curl_easy_cleanup(handle)
            }
        }

        func releaseIdleHandles() {
            for handle in idleHandles { curl_easy_cleanup(handle) }
            idleHandles.removeAll()
        }

        private func collectFinished() {
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                    let id = byHandle[handle], let transfer = active[id]
                else { continue }
                let code = message.pointee.data.result
                remove(transfer)
                transfer.finish(code: code)
                recycle(transfer.handle)
            }
        }

        private func resumePaused() {
            let ids = paused
            paused.removeAll()
            for id in ids {
                if let transfer = active[id] {
                    _ = curl_easy_pause(transfer.handle, CURLPAUSE_CONT)
                }
            }
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
