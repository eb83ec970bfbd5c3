/// How many requests to keep in flight, decided from what finished requests showed.
///
/// Pure: no I/O, no clock of its own. The caller feeds each finished request (bytes, seconds it
/// took, whether it was throttled) with the time and the number in flight, and reads `depth`.
///
/// The rule (Little's law): requests keep a link and a server busy once `rate × baseLatency`
/// of them are in flight (`rate`: completions a second; `baseLatency`: the shortest reply seen,
/// a round trip plus the server's time plus the request's own time on the wire). For big
/// requests that is the bandwidth-delay product in requests, plus the one on the wire; more
/// only queue.
/// - Start: sized to the first request (`startingBytes` in flight: 128 small files, two big
///   ones), then doubled each window (about one reply long) while the rate beats the best window
///   so far by 10%; two windows that do not end it.
/// - Then the pool drains to one request for a moment, so one reply shows the unqueued latency,
///   and Little's law proposes `1.25 × rate × baseLatency`.
/// - After that, each window recomputes it: while replies take no longer than the base
///   latency it grows (by at most a quarter a window, only when every slot was busy). A lower
///   proposal (a full link or server, a link that slowed down, or replies that wait for a busy
///   CPU) is a trial: at most half as deep, kept only if the rate fell by less than a fifth of
///   the cut (a tenth for half), else the depth goes back and holds. Every `probeEvery` windows
///   a quarter more is tried and kept only if the rate rose by 0.4 of the step. So a base
///   latency that no longer holds cannot walk the depth down to the floor.
/// - A throttled reply (429, 503, SlowDown) halves the depth at once, at most once a second;
///   growth is then +1 a window for `recoverySeconds`, and the depth stays below the one that
///   was throttled for `throttleMemorySeconds`. A timeout or a broken connection cuts by a
///   quarter the same way.
/// A pinned depth (`--concurrency N`) never moves.
public struct DepthController: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case completed
        /// 429, 503, SlowDown: the server asks for fewer requests.
        case throttled
        /// A timeout or a broken connection: the link may be overloaded.
        case failed
    }

    /// Why the depth is what it is (shown by `-v` and in `--json` summaries).
    public enum Reason: String, Sendable, Equatable {
        case pinned = "pinned by --concurrency"
        case starting = "sized to the first request"
        case rising = "throughput rose with depth"
        case draining = "draining to measure the unqueued latency"
        case full = "link or server full: deeper would only queue"
        case slower = "replies slowed down"
        case throttled = "the server throttled (429/503 SlowDown)"
        case recovering = "recovering after throttling"
        case lostThroughput = "fewer in flight lost throughput"
        case belowThrottling = "kept below the depth where the server throttled"
        case maximum = "the most r2up keeps in flight (512, or fewer where open files are limited)"
        case memory = "the most whose upload buffers fit the memory budget"
    }

    package enum Phase: Sendable, Equatable { case slowStart, draining, steady }

    public static let maximumDepth = 512
    /// Bytes in flight a run starts with: 2 MiB (128 small files, the floor of big ones).
    public static let startingBytes: Int64 = 2 << 20
    /// The most memory the requests in flight may take: each costs `requestOverhead` (its
    /// connection, handle and task) plus its upload buffer (up to `bufferCap`). Measured
    /// 2026-11-26, release build, 1,000 x 16 KiB: 45 MiB at 16 in flight, 64 MiB at 256, 85 MiB
    /// at 512, so ~75 KiB each; r2up's ~44-50 MiB at rest plus this budget stays within 64 MiB.
    public static let bufferBudget: Int64 = 14 << 20
    public static let requestOverhead: Int64 = 56 << 10
    public static let bufferCap: Int64 = 512 << 10
    public static let recoverySeconds = 5.0
    package static let minimumWindow = 0.05
    package static let cutSpacing = 1.0
    /// A cut in depth is kept unless the rate fell by more than this share of the cut (halving
    /// may lose a tenth); a probe upwards is kept if the rate rose by this share of the step
    /// (a quarter more must bring a tenth more).
    package static let keepElasticity = 0.2
    package static let probeElasticity = 0.4
    /// Windows between probes upwards, and windows a rejected cut holds the depth.
    package static let probeEvery = 8
    package static let holdWindows = 8
    /// How long the depth stays below where the server throttled.
    package static let throttleMemorySeconds = 30.0

    public let pinned: Bool
    /// The most this run may keep in flight (`maximumDepth`, or fewer where file descriptors are scarce).
    public let ceiling: Int
    public private(set) var depth: Int
    public private(set) var reason: Reason
    public private(set) var peakDepth: Int
    public private(set) var throttledReplies = 0
    public private(set) var failedReplies = 0
    public private(set) var cuts = 0
    /// The depth of the last window that kept every slot busy: what the run settled on.
    public private(set) var settledDepth: Int
    public private(set) var settledReason: Reason
    /// The latest window's completions a second, and the shortest reply of the run.
    public private(set) var lastRate = 0.0
    public private(set) var baseLatency = Double.infinity

    private var started = false
    private var phase = Phase.slowStart
    private var windowStart = 0.0
    private var windowCount = 0
    private var windowLatency = 0.0
    private var windowMaxInFlight = 0
    private var windowThrottled = false
    private var lastCut = -Double.infinity
    private var recoveringUntil = -Double.infinity
    private var previousRate = 0.0
    /// The best window of slow start: the reference the first cut after the drain is judged by.
    private var bestRate = 0.0
    private var bestDepth = 0
    private var flatWindows = 0
    /// A depth being tried against the one before it (`from`, at `fromRate`); judged on its
    /// second window (the first still carries requests sent at the old depth).
    private struct Trial: Sendable, Equatable {
        var from: Int
        var fromRate: Double
        var up: Bool
        var settled = false
    }
    private var trial: Trial?
    private var hold = 0
    private var holdRate = 0.0
    private var windowsSinceProbe = 0
    private var throttleCeiling = Int.max
    private var throttleCeilingUntil = -Double.infinity
    /// When the drain emptied the pool; a reply to a request sent after it is unqueued.
    private var drainedAt: Double?
    private var meanBytes: Double = 0
    private var smoothedLatency: Double = 0

    /// The slowest a request may go (bytes a second, over curl's low-speed time) before it counts
    /// as stalled: a 64th of its share of the measured link (the link's byte rate over the requests
    /// in flight), so a request crawling far below its fellows is cut while a link that slows down
    /// for all (a tenth of its rate) trips nothing. 1 (only a full stall) until a rate is measured,
    /// for 0-byte requests, and at most 64 KiB/s.
    public var lowSpeedLimit: Int {
        guard !pinned, lastRate > 0, meanBytes > 0, depth > 0 else { return 1 }
        let share = lastRate * meanBytes / Double(depth)
        return Int(max(1, min(Double(Self.lowSpeedCeiling), share / 64)))
    }

    /// The highest `lowSpeedLimit`: 64 KiB a second.
    public static let lowSpeedCeiling = 64 << 10

    /// The upload buffer each request may take at this depth: its share of `bufferBudget` less
    /// `requestOverhead`, from curl's minimum (16 KiB) to `bufferCap`. A pinned depth of hundreds
    /// then stays within the budget too (512 requests of 3 MiB parts no longer hold 512 KiB each).
    public var uploadBufferCap: Int {
        let share = Self.bufferBudget / Int64(max(1, depth)) - Self.requestOverhead
        return Int(max(16 << 10, min(Self.bufferCap, share)))
    }

    /// A depth that never changes.
    public init(pinned depth: Int) {
        pinned = true
        ceiling = max(1, depth)
        self.depth = max(1, depth)
        reason = .pinned
        peakDepth = self.depth
        settledDepth = self.depth
        settledReason = .pinned
    }

    /// An adaptive depth up to `ceiling`; `start` sizes it to the first request.
    public init(ceiling: Int = DepthController.maximumDepth) {
        pinned = false
        self.ceiling = min(Self.maximumDepth, max(Self.floor(meanBytes: 0), ceiling))
        depth = 4
        reason = .starting
        peakDepth = 4
        settledDepth = 4
        settledReason = .starting
    }

    /// The fewest requests kept in flight outside throttling: 4 for small requests, 2 for big
    /// ones (one transfers while the other waits for its reply).
    package static func floor(meanBytes: Double) -> Int {
        guard meanBytes > 0 else { return 2 }
        // Clamped as a Double: HEADs and DELETEs (0 bytes) drive the mean towards 0.
        return Int(min(4.0, max(2.0, (8.0 * 1_048_576) / meanBytes)))
    }

    /// The most requests whose memory fits the budget.
    package static func memoryCap(meanBytes: Double) -> Int {
        let buffer = max(16_384, min(Double(bufferCap), meanBytes))
        return max(1, min(maximumDepth, Int(Double(bufferBudget) / (Double(requestOverhead) + buffer))))
    }

    /// Sizes the starting depth to the first request: `startingBytes` of them in flight.
    public mutating func start(requestBytes: Int64, now: Double) {
        guard !pinned, !started else { return }
        started = true
        windowStart = now
        meanBytes = Double(max(1, requestBytes))
        let sized = Int(Self.startingBytes / max(1, requestBytes))
        depth = min(ceiling, Self.memoryCap(meanBytes: meanBytes), max(Self.floor(meanBytes: meanBytes), min(128, sized)))
        peakDepth = depth
        settledDepth = depth
    }

    /// Records one finished request; `inFlight` counts it and every other request still running.
    public mutating func record(bytes: Int64, seconds: Double, outcome: Outcome, inFlight: Int, now: Double) {
        guard !pinned else { return }
        if !started { start(requestBytes: bytes, now: now - seconds) }
        windowMaxInFlight = max(windowMaxInFlight, inFlight)
        if outcome != .completed {
            if outcome == .throttled { throttledReplies += 1 } else { failedReplies += 1 }
            windowThrottled = true
            // At most once a second: the replies to requests sent before a cut are no news.
            guard now - lastCut >= max(Self.cutSpacing, smoothedLatency) else { return }
            lastCut = now
            cuts += 1
            // Deeper than this is where the server (or the link) pushed back: stay below it.
            let remembered = now < throttleCeilingUntil ? throttleCeiling : Int.max
            throttleCeiling = min(remembered, max(1, depth - 1))
            throttleCeilingUntil = now + Self.throttleMemorySeconds
            trial = nil
            hold = 0
            depth = max(1, Int(Double(depth) * (outcome == .throttled ? 0.5 : 0.75)))
            reason = .throttled
            phase = .steady
            recoveringUntil = now + Self.recoverySeconds
            restartWindow(now)
            return
        }
        meanBytes = meanBytes == 0 ? Double(bytes) : meanBytes * 0.9 + Double(bytes) * 0.1
        smoothedLatency = smoothedLatency == 0 ? seconds : smoothedLatency * 0.875 + seconds * 0.125
        baseLatency = min(baseLatency, seconds)
        windowCount += 1
        windowLatency += seconds
        if phase == .draining {
            if drainedAt == nil && inFlight <= 1 { drainedAt = now }
            // The first reply to a request sent into the empty pipe is the unqueued latency.
            if let drainedAt, now - seconds >= drainedAt { finishDrain(now) }
            return
        }
        let elapsed = now - windowStart
        if elapsed >= max(Self.minimumWindow, smoothedLatency) && windowCount >= min(8, max(1, depth / 2)) {
            closeWindow(elapsed: elapsed, now: now)
        }
    }

    /// `rate × baseLatency`: the requests that keep the pipe full without queueing. The base
    /// latency of a big request includes its own time on the wire (`bytes / link rate`), so for
    /// those this is `1 + link rate × round trip / bytes`: the bandwidth-delay product plus one.
    private func knee(rate: Double) -> Double { rate * (baseLatency.isFinite ? baseLatency : 0) }

    private mutating func restartWindow(_ now: Double) {
        windowStart = now
        windowCount = 0
        windowLatency = 0
        windowMaxInFlight = 0
        windowThrottled = false
    }

    private mutating func finishDrain(_ now: Double) {
        phase = .steady
        let proposed = Int((1.25 * knee(rate: bestRate)).rounded(.up))
        if proposed < bestDepth {
            // Fewer than slow start's best: a trial, judged against that best window.
            trial = Trial(from: bestDepth, fromRate: bestRate, up: false)
            set(max(proposed, bestDepth / 2), .full, now: now, limited: true)
        } else {
            set(proposed, .full, now: now, limited: true)
        }
        restartWindow(now)
    }

    private mutating func closeWindow(elapsed: Double, now: Double) {
        let rate = Double(windowCount) / elapsed
        lastRate = rate
        let limited = windowMaxInFlight >= depth
        var next = depth
        var why = reason
        if now < recoveringUntil {
            // After throttling: additive growth, and only when every slot was busy.
            if limited && !windowThrottled {
                next = depth + 1
                why = .recovering
            }
        } else {
            switch phase {
            case .slowStart:
                if !limited {
                    // The work did not fill the pool: nothing learnt about the link.
                } else if rate >= bestRate * 1.1 {
                    (bestRate, bestDepth, flatWindows) = (rate, depth, 0)
                    next = min(2 * depth, max(depth + 1, Int((2 * knee(rate: rate)).rounded(.up))))
                    why = .rising
                } else if flatWindows == 0 {
                    // One flat window may be noise or the last doubling not yet answered.
                    flatWindows = 1
                } else {
                    phase = .draining
                    drainedAt = nil
                    next = 1
                    why = .draining
                }
            case .draining:
                break
            case .steady:
                (next, why) = steady(rate: rate, limited: limited, now: now)
            }
        }
        set(next, why, now: now, limited: limited)
        previousRate = rate
        restartWindow(now)
    }

    /// After slow start: Little's law proposes (`1.25 × rate × baseLatency`); a cut it asks for
    /// is tried and kept only if the rate held up, and every `probeEvery` windows a quarter more
    /// is tried and kept only if the rate rose. So a base latency that no longer holds (every
    /// reply waiting for a busy CPU) cannot walk the depth down to the floor.
    private mutating func steady(rate: Double, limited: Bool, now: Double) -> (Int, Reason) {
        if var current = trial {
            guard limited else {
                // Too little work to judge: a probe goes back, a cut stays.
                trial = nil
                return (current.up ? current.from : depth, current.up ? .full : reason)
            }
            guard current.settled else {
                current.settled = true
                trial = current
                return (depth, reason)
            }
            trial = nil
            let step = Double(depth) / Double(current.from) - 1
            if current.up {
                windowsSinceProbe = 0
                return rate >= current.fromRate * (1 + Self.probeElasticity * step)
                    ? (depth, .rising) : (current.from, .full)
            }
            if rate >= current.fromRate * (1 + Self.keepElasticity * step) { return (depth, reason) }
            hold = Self.holdWindows
            holdRate = current.fromRate
            return (current.from, .lostThroughput)
        }
        windowsSinceProbe += 1
        if hold > 0 {
            hold -= 1
            // A rate well below the one the hold was set at: the link changed, judge afresh.
            if rate < 0.7 * holdRate { hold = 0 }
        }
        let proposed = Int((1.25 * knee(rate: rate)).rounded(.up))
        if proposed > depth, limited {
            return (min(proposed, depth + max(1, depth / 4)), .rising)
        }
        let floor = Self.floor(meanBytes: meanBytes)
        if proposed < depth, hold == 0, depth > floor {
            trial = Trial(from: depth, fromRate: rate, up: false)
            return (max(proposed, depth / 2, floor), rate < 0.7 * previousRate ? .slower : .full)
        }
        if limited, windowsSinceProbe >= Self.probeEvery, depth < upperBound(now) {
            trial = Trial(from: depth, fromRate: rate, up: true)
            return (depth + max(1, depth / 4), reason)
        }
        return (depth, reason)
    }

    /// The most the depth may be now: the ceiling, the memory cap, below recent throttling.
    private func upperBound(_ now: Double) -> Int {
        min(ceiling, Self.memoryCap(meanBytes: meanBytes), now < throttleCeilingUntil ? throttleCeiling : Int.max)
    }

    private mutating func set(_ proposed: Int, _ why: Reason, now: Double, limited: Bool) {
        var next = proposed
        var why = why
        if phase != .draining, now >= recoveringUntil { next = max(next, Self.floor(meanBytes: meanBytes)) }
        let memory = Self.memoryCap(meanBytes: meanBytes)
        if next > min(memory, ceiling) {
            next = min(memory, ceiling)
            why = memory < ceiling ? .memory : .maximum
        }
        if now < throttleCeilingUntil, next > throttleCeiling {
            next = throttleCeiling
            why = .belowThrottling
        }
        depth = max(1, next)
        reason = why
        peakDepth = max(peakDepth, depth)
        if limited && phase != .draining && trial == nil {
            settledDepth = depth
            settledReason = reason
        }
    }
}
