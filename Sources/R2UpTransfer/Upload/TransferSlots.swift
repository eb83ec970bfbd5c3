import Foundation
public import R2UpModel
import Synchronization

/// Limits how many requests run at once across every file and part ("parts count").
///
/// The limit is a `DepthController`'s depth: pinned (`--concurrency N`) or adaptive, fed here
/// with every finished request. A lock, not an actor: taking a free slot is then a plain
/// call, with no hop to another executor for each of a small-file push's thousands of requests.
public final class TransferSlots: Sendable {
    private struct State {
        var inUse = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        var controller: DepthController
        /// When resident memory was last read (slots' clock); -inf before the first reading.
        var memoryReadAt = -Double.infinity
    }
    private let state: Mutex<State>
    private let clock: @Sendable () -> Double
    /// Where the engine reads each new transfer's low-speed limit and upload buffer size.
    private let tuning: TransferTuning?
    /// The process's resident bytes (nil where it cannot be read): the depth, adaptive or pinned,
    /// stays within what it leaves room for (`DepthController.noteResident`).
    private let resident: (@Sendable () -> Int64?)?

    /// How often resident memory is read while requests finish: a reading is a small file read,
    /// and every 25 ms lets the depth follow a wave of hundreds starting (a 2,000-file push on
    /// loopback takes under a second).
    static let memoryReadingSpacing = 0.025

    /// `clock` gives seconds on a monotonic scale (injected by tests).
    /// `tuning`: what the engine gives each new transfer, set here from the depth and the link.
    /// `resident`: reads the process's resident memory; nil leaves the depth to the fixed budget
    /// (and a pinned one at its pin).
    public init(
        controller: DepthController, tuning: TransferTuning? = nil,
        resident: (@Sendable () -> Int64?)? = nil,
        clock: @escaping @Sendable () -> Double = TransferSlots.monotonicSeconds
    ) {
        state = Mutex(State(controller: controller))
        self.clock = clock
        self.tuning = tuning
        self.resident = resident
        tuning?.update(controller)
    }

    /// Reads resident memory when a reading is due (outside the lock: it is a file read) and hands
    /// it to the depth.
    private func readMemoryIfDue(now: Double) {
        guard let resident else { return }
        let due = state.withLock { state -> Bool in
            guard now - state.memoryReadAt >= Self.memoryReadingSpacing else { return false }
            state.memoryReadAt = now
            return true
        }
        guard due, let bytes = resident() else { return }
        state.withLock { $0.controller.noteResident(bytes, inFlight: $0.inUse) }
    }

    @Sendable public static func monotonicSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    /// Requests allowed in flight now.
    public var limit: Int { state.withLock { $0.controller.depth } }

    /// What the depth settled on and why, for summaries.
    public var depthReport: DepthReport { state.withLock { DepthReport($0.controller) } }

    /// Sizes an adaptive depth's start before the first request goes out (`bytes`: its body), so
    /// a dispatcher that reads `limit` starts that many at once. Unsized, the depth is 4 until the
    /// first PUT takes a slot, and a push ran 4 files alone (a HEAD and a PUT each, ~0.8 s with
    /// 200 ms replies) before the rest went out.
    public func prepare(bytes: Int64) {
        let now = clock()
        readMemoryIfDue(now: now)
        let controller = state.withLock { state in
            state.controller.start(requestBytes: bytes, now: now)
            return state.controller
        }
        tuning?.update(controller)
    }

    /// Waits for a free slot; `bytes` (the request body) sizes an adaptive depth's start.
    public func acquire(bytes: Int64 = 0) async { await take(sizing: bytes) }

    /// Waits for a free slot; `bytes` sizes an adaptive depth's start, nil sizes nothing.
    private func take(sizing bytes: Int64?) async {
        let now = clock()
        let taken = state.withLock { state -> Bool in
            if let bytes { state.controller.start(requestBytes: bytes, now: now) }
            guard state.inUse < state.controller.depth else { return false }
            state.inUse += 1
            return true
        }
        if taken { return }
        await withCheckedContinuation { continuation in
            // A slot may have been freed between the two locks: take it rather than wait.
            let resumeNow = state.withLock { state -> Bool in
                if state.inUse < state.controller.depth {
                    state.inUse += 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Frees a slot without news for the depth (a request that never went out).
    public func release() {
        let next = state.withLock { state in
            state.controller.noteInFlight(state.inUse)
            return Self.handOut(&state, freeing: 1)
        }
        for waiter in next { waiter.resume() }
    }

    /// Frees a slot and tells the depth how the request went.
    public func release(bytes: Int64, seconds: Double, outcome: DepthController.Outcome) {
        let now = clock()
        readMemoryIfDue(now: now)
        let (next, controller) = state.withLock { state in
            state.controller.record(bytes: bytes, seconds: seconds, outcome: outcome, inFlight: state.inUse, now: now)
            return (Self.handOut(&state, freeing: 1), state.controller)
        }
        tuning?.update(controller)
        for waiter in next { waiter.resume() }
    }

    /// Runs one S3 call in a slot and tells the depth how it went (a HEAD's `bytes` is 0): the
    /// way in for callers outside this module (offload's HEADs).
    public func withSlot<T: Sendable>(
        bytes: Int64 = 0, _ body: () async throws(S3ClientError) -> T
    ) async throws(S3ClientError) -> T {
        try await inSlot(bytes: bytes, body)
    }

    /// One request in a slot: a free one is waited for, and the depth is told how it went
    /// (a cancelled request only gives its slot back).
    /// `timed: false` (a HEAD before a write): its reply time and byte count say nothing about
    /// the writes' pipe, so only throttling and failures reach the depth.
    private func inSlot<T: Sendable, E: ClassifiedError>(
        bytes: Int64, timed: Bool = true, _ body: () async throws(E) -> T
    ) async throws(E) -> T {
        await acquire(bytes: bytes)
        let start = clock()
        do {
            let value = try await body()
            if timed { release(bytes: bytes, seconds: clock() - start, outcome: .completed) } else { release() }
            return value
        } catch {
            let kind = error.failureKind
            if kind == .cancelled { release() } else { release(bytes: bytes, seconds: clock() - start, outcome: DepthController.Outcome(kind)) }
            throw error
        }
    }

    /// Seconds on this slots' clock.
    public func now() -> Double { clock() }

    /// Frees slots and passes them to the longest waiters while the depth allows (it may have
    /// grown by several, or shrunk below what is in use).
    private static func handOut(_ state: inout State, freeing: Int) -> [CheckedContinuation<Void, Never>] {
        state.inUse -= freeing
        var woken: [CheckedContinuation<Void, Never>] = []
        while state.inUse < state.controller.depth, !state.waiters.isEmpty {
            state.inUse += 1
            woken.append(state.waiters.removeFirst())
        }
        return woken
    }
}

extension DepthController.Outcome {
    /// What a failed request tells the depth: throttling, an overloaded link, or nothing (the
    /// server answered; its reply time counts like any other).
    init(_ kind: FailureKind) {
        switch kind {
        case .httpStatus(let status, let code):
            self = status == 429 || status == 503 || code == "SlowDown" || code == "TooManyRequests" ? .throttled : .completed
        case .timeout, .connectionReset:
            self = .failed
        default:
            self = .completed
        }
    }
}

/// What each new transfer is set up with, from the run's depth and the link it measured: the
/// engine reads it as a transfer starts, the run's slots write it. Several slots (a push's and a
/// pull's) may feed one.
public final class TransferTuning: Sendable {
    private let lowSpeed = Atomic<Int>(1)
    private let uploadBuffer: Atomic<Int>

    public init(uploadBufferCap: Int = Int(DepthController.bufferCap)) { uploadBuffer = Atomic(uploadBufferCap) }

    /// curl's low-speed limit, bytes a second (`DepthController.lowSpeedLimit`).
    public var lowSpeedLimit: Int { lowSpeed.load(ordering: .relaxed) }
    /// The largest upload buffer a transfer gets (`DepthController.uploadBufferCap`).
    public var uploadBufferCap: Int { uploadBuffer.load(ordering: .relaxed) }

    func update(_ controller: DepthController) {
        lowSpeed.store(controller.lowSpeedLimit, ordering: .relaxed)
        uploadBuffer.store(controller.uploadBufferCap, ordering: .relaxed)
    }
}

extension TransferSlots {
    /// Runs a request sent before the run's first write (the one that names the server) in a
    /// slot, so a pinned depth holds; it tells the depth nothing: the first file sizes an
    /// adaptive start (`prepare`), and the rate is the writes'.
    func withUnsizedSlot<T: Sendable>(_ body: () async throws(UploadError) -> T) async throws(UploadError) -> T {
        await take(sizing: nil)
        defer { release() }
        return try await body()
    }

    /// Runs one request in a slot and tells the depth how it went (`bytes`: its body).
    func withTypedSlot<T: Sendable>(
        bytes: Int64 = 0, timed: Bool = true, _ body: () async throws(UploadError) -> T
    ) async throws(UploadError) -> T {
        try await inSlot(bytes: bytes, timed: timed, body)
    }
}
