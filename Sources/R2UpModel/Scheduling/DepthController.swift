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
/// - Start: sized to the first request (`startingBytes` in flight, at least 8 under 8 MiB; small
///   ones 256 where memory is measured, else 128), then doubled each window (about one reply
///   long) while the rate rises 10% and big replies stay under `longestRoundTrip` per request in flight.
/// - Once the rate stops rising the pool drains to one request for a moment, so one reply shows
///   the unqueued latency, and the depth becomes `2 × rate × baseLatency`. Requests of at most
///   `latencyBoundBytes` skip the drain and keep `4 × rate × baseLatency` (see `headroom`).
/// - After that, each window recomputes it: while replies take no longer than the base
///   latency it grows (by at most a quarter a window, only when every slot was busy); when
///   replies queue (a full link or server, a link that slowed down), the rate stops following
///   and the depth falls back (by at most half a window). For small requests a fall that costs
///   throughput (the next window's rate down by 15 to 55%) is undone, and the depth stays at
///   least there until replies really slow down or the server throttles: on a busy machine the
///   luckiest reply understates every other, and the rule alone walks down to the floor.
/// - A throttled reply (429, 503, SlowDown) halves the depth at once, at most once a second;
///   growth is then +1 a window for `recoverySeconds`. A timeout or a broken connection cuts by
///   a quarter the same way.
/// - Memory: where the caller reads the process's resident memory (`noteResident`), the depth
///   stays where `residentLimit` leaves room for (`requestMemory` each; over it, the limit's share
///   of the busiest point); elsewhere a fixed budget of `requestOverhead` a request bounds it
///   (`memoryCap`).
/// A pinned depth (`--concurrency N`) moves only for memory: never above N, and no higher than
/// the resident memory leaves room for (`noteResident`), but never below what the 8 MiB floor
/// always allows (a pin that small holds in any process).
public struct DepthController: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case completed
        /// 429, 503, SlowDown: the server asks for fewer requests.
        case throttled
        /// A timeout or a broken connection: the link may be overloaded.
        case failed
    }

    package enum Phase: Sendable, Equatable { case slowStart, draining, steady }

    public static let maximumDepth = 512
    /// Bytes in flight a run starts with: 2 MiB (128 small files, the floor of big ones).
    public static let startingBytes: Int64 = 2 << 20
    /// The most memory the requests in flight may take: each costs `requestOverhead` plus its upload
    /// buffer (up to `bufferCap`). A small request in flight adds ~45 KiB of resident memory, curl's
    /// 16 KiB upload buffer included (measured 2026-11-27, release build, heaptrack and peak RSS;
    /// see docs/development/benchmarks.md): 44 KiB keeps 204 of W3's 2,000 × 16 KiB within 64 MiB.
    public static let bufferBudget: Int64 = 12 << 20
    public static let requestOverhead: Int64 = 44 << 10
    /// curl's default: a 1 GiB push took 0.77 CPU s, 1.04 with 512 KiB (benchmarks, eleventh round).
    public static let bufferCap: Int64 = 64 << 10
    /// The resident memory the adaptive depth keeps the process within where it is measured: the 64 MiB
    /// bound less what starts between two readings (a 2,000-file push peaked 1.5 MiB over its target).
    public static let residentLimit: Int64 = 61 << 20
    /// The resident memory one more small request in flight adds once curl frees its upload buffer:
    /// ~38 KiB measured 2026-11-27 (1,000 × 16 KiB with 200 ms replies: 49.4 MiB at 16 in flight,
    /// 59.2 at 256, 67.0 at 489): curl's handle, connection and transfer state, the task's frames.
    public static let residentPerRequest: Int64 = 40 << 10
    /// The same over TLS, where OpenSSL's state sits beside curl's: 1,000 × 16 KiB through a TLS
    /// proxy took 52.0 MiB at 16 in flight and 71.5 at 256 (~83 KiB each; measured 2026-11-28),
    /// and a wave of handshakes at once takes more for a while.
    public static let residentPerTLSRequest: Int64 = 96 << 10
    /// What requests in flight may always add to the resident memory seen with none in flight: a
    /// process already near `residentLimit` (a daemon over a big library) still runs ~200 small
    /// requests, as before memory was measured, rather than a few.
    public static let requestBudgetFloor: Int64 = 8 << 20
    /// Where small requests start when memory is measured.
    package static let deepStart = 256
    public static let recoverySeconds = 5.0
    /// Requests this small spend next to nothing on the wire: their reply time is latency.
    package static let latencyBoundBytes = 32.0 * 1024
    package static let minimumWindow = 0.05
    /// Replies at least this slow (s) come in waves: slow start doubles small requests freely.
    package static let waveLatency = 0.05
    package static let cutSpacing = 1.0
    /// The longest round trip plus server time expected (R2 commits a write in ~0.2-0.35 s).
    package static let longestRoundTrip = 0.5

    public let pinned: Bool
    /// The most this run may keep in flight (`maximumDepth`, or fewer where file descriptors are scarce).
    public let ceiling: Int
    public private(set) var depth: Int
    public private(set) var reason: Reason
    public private(set) var peakDepth: Int
    public private(set) var throttledReplies = 0
    public private(set) var failedReplies = 0
    public private(set) var cuts = 0
    /// The most requests seen in flight at once (at a request's end): fewer than the depth when
    /// the run had fewer to send.
    public private(set) var busiest = 0
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
    private var plateauRate = 0.0
    /// When the drain emptied the pool; a reply to a request sent after it is unqueued.
    private var drainedAt: Double?
    /// The mean request size seen so far.
    private(set) var meanBytes: Double = 0
    /// The depth before the steady rule's last fall of small requests and the rate it kept
    /// (0: the last window did not lower it), and the least depth a fall proved was needed.
    private var loweredFrom = 0
    private var loweredRate = 0.0
    private var keepAtLeast = 0
    private var smoothedLatency: Double = 0
    /// The most in flight the latest reading of resident memory leaves room for; nil: not measured.
    public private(set) var memoryRoom: Int?
    /// The latest reading taken with no request in flight.
    private var idleResident: Int64 = 0
    /// The most in flight at any reading since the idle one: what the memory over it went to.
    private var busiestSinceIdle = 0
    /// What one request in flight is expected to add to the resident memory.
    public let requestMemory: Int64

    /// A depth of `depth`, lower only where memory readings leave room for fewer (`requestMemory`
    /// each, as for an adaptive depth).
    public init(pinned depth: Int, requestMemory: Int64 = DepthController.residentPerRequest) {
        pinned = true
        ceiling = max(1, depth)
        self.depth = max(1, depth)
        reason = .pinned
        peakDepth = self.depth
        settledDepth = self.depth
        settledReason = .pinned
        self.requestMemory = max(1, requestMemory)
    }

    /// An adaptive depth up to `ceiling`; `start` sizes it to the first request. `requestMemory`:
    /// what a request in flight is expected to cost (`residentPerTLSRequest` over TLS).
    public init(ceiling: Int = DepthController.maximumDepth, requestMemory: Int64 = DepthController.residentPerRequest) {
        pinned = false
        self.requestMemory = max(1, requestMemory)
        self.ceiling = min(Self.maximumDepth, max(Self.floor(meanBytes: 0), ceiling))
        depth = 4
        reason = .starting
        peakDepth = 4
        settledDepth = 4
        settledReason = .starting
    }

    /// The most requests the memory allows now: the buffer budget, and the room the latest reading
    /// of resident memory left.
    private var memoryLimit: Int {
        let buffers = Self.memoryCap(meanBytes: meanBytes, measured: memoryRoom != nil)
        return min(buffers, memoryRoom ?? buffers)
    }

    /// Takes a reading of the process's resident memory (`resident` bytes, `inFlight` requests
    /// running). The memory over the idle reading went to the most requests in flight since
    /// (`busiestSinceIdle`): what those freed is reused, not returned, so that many cost nothing
    /// more. Under `residentLimit` (or the idle reading plus `requestBudgetFloor`, if more) the
    /// depth may grow by what the rest leaves room for, at `requestMemory` each, and never comes
    /// down for memory. Over it, it comes down at once to the share of the busiest point the
    /// limit leaves (the requests took more than expected: TLS, a bigger process), and stays
    /// there as requests finish: fewer in flight would not give the memory back. Never below the
    /// floor. A pinned depth is what the room allows, up to its pin.
    public mutating func noteResident(_ resident: Int64, inFlight: Int) {
        guard resident > 0 else { return }
        if inFlight == 0 {
            idleResident = resident
            busiestSinceIdle = 0
        }
        busiestSinceIdle = max(busiestSinceIdle, inFlight)
        let limit = max(Self.residentLimit, idleResident + Self.requestBudgetFloor)
        let floor = Self.floor(meanBytes: meanBytes)
        if resident > limit {
            // resident - idleResident > requestBudgetFloor here: the division is safe.
            let share = Double(limit - idleResident) / Double(resident - idleResident)
            memoryRoom = max(floor, Int(Double(busiestSinceIdle) * share))
        } else {
            // An adaptive depth never comes down under the limit; a pinned one is the room.
            memoryRoom = max(floor, busiestSinceIdle + Int((limit - resident) / requestMemory), pinned ? floor : depth)
        }
        if pinned, let memoryRoom {
            pinWithin(memoryRoom)
        } else if let memoryRoom, depth > memoryRoom {
            depth = memoryRoom
            reason = .memory
        }
    }

    /// A pinned depth within `room`: its pin, or fewer where memory leaves room for fewer, but
    /// never fewer than `requestBudgetFloor` always allows (204 small requests, 85 over TLS): a
    /// pin that small holds in any process (a daemon, a test run, a sanitizer's heap).
    private mutating func pinWithin(_ room: Int) {
        depth = min(ceiling, max(room, Int(Self.requestBudgetFloor / requestMemory)))
        reason = depth < ceiling ? .memory : .pinned
        // Before the first request the pin was only asked for: the peak is what was allowed since.
        peakDepth = busiest == 0 ? depth : max(peakDepth, depth)
        settledDepth = depth
        settledReason = reason
    }

    /// Sizes the starting depth to the first request: `startingBytes` of them in flight.
    public mutating func start(requestBytes: Int64, now: Double) {
        guard !pinned, !started else { return }
        started = true
        windowStart = now
        meanBytes = Double(max(1, requestBytes))
        let sized = Int(Self.startingBytes / max(1, requestBytes))
        // Small requests with memory measured start at 256, as s5cmd's workers do: their bytes
        // cost the link nothing, and each wave costs a reply (R2's ~200 ms commit). Not at the
        // whole room: the scan and the queue still grow after the first reading (a 2,000-file
        // push went to 67 MiB), and the readings during the run bound the growth from there.
        let wanted = memoryRoom != nil && meanBytes <= Self.latencyBoundBytes ? Self.deepStart : min(128, sized)
        // At least 8 under 8 MiB: from 2, 3 MiB files took two windows more of slow start.
        let least = meanBytes < 8 * 1_048_576 ? 8 : Self.floor(meanBytes: meanBytes)
        depth = min(ceiling, memoryLimit, max(least, wanted))
        reason = depth < wanted ? (memoryLimit < ceiling ? .memory : .maximum) : .starting
        peakDepth = depth
        settledDepth = depth
        settledReason = reason
    }

    /// A request ended with no news for the depth (a HEAD before a write, a cancelled one):
    /// `inFlight` counts it and every other request still running.
    public mutating func noteInFlight(_ inFlight: Int) { busiest = max(busiest, inFlight) }

    /// Records one finished request; `inFlight` counts it and every other request still running.
    public mutating func record(bytes: Int64, seconds: Double, outcome: Outcome, inFlight: Int, now: Double) {
        busiest = max(busiest, inFlight)
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
            depth = max(1, Int(Double(depth) * (outcome == .throttled ? 0.5 : 0.75)))
            reason = .throttled
            phase = .steady
            recoveringUntil = now + Self.recoverySeconds
            keepAtLeast = 0
            loweredFrom = 0
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

    /// How far past the knee the depth stays. 2 for big requests: beyond it they only queue on the
    /// link, and 1.25 left 48 × 3 MiB at 40 ms at 4 in flight where 8 ran 20% faster (one
    /// connection does not carry the whole link: measured 2026-11-27). 4 for latency-bound ones:
    /// the shortest reply of a run is a lucky one, and on a busy machine or server every reply
    /// takes longer at any depth, so 1.25 settled at 10-20 requests where 200 ran twice as fast
    /// (measured 2026-11-27, 1,000 × 16 KiB at 40 ms); a queue of small requests costs memory
    /// (capped by `memoryCap`), not the link, and a link that slows to a tenth still brings the
    /// rate, and so the depth, down tenfold.
    private var headroom: Double { meanBytes <= Self.latencyBoundBytes ? 4 : 2 }

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
        set(Int((headroom * knee(rate: plateauRate)).rounded(.up)), .full, now: now, limited: true)
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
                // Big replies longer than `longestRoundTrip` for each in flight are time on the wire:
                // fewer would fill the link even at that round trip (4 of 3 MiB on 10 Mbit/s: 10 s).
                let wireBound = meanBytes > Self.latencyBoundBytes && windowLatency > Self.longestRoundTrip * Double(depth * windowCount)
                if !limited {
                    // The work did not fill the pool: nothing learnt about the link.
                } else if rate >= previousRate * 1.1 && !wireBound {
                    // Doubled, up to what memory allows, for small requests whose replies take 50 ms
                    // or more, and big ones whose replies do not queue yet: a window's rate counts
                    // replies to requests sent before the depth grew, so twice the knee lags a step.
                    // Big ones whose replies queue (1.5 × the shortest) keep the knee, as do small
                    // ones with fast replies (on loopback deeper crowds the server: W3 0.85×).
                    let queued = windowLatency > 1.5 * baseLatency * Double(windowCount)
                    let free = meanBytes > Self.latencyBoundBytes ? !queued : baseLatency >= Self.waveLatency
                    let bound = free ? 2 * depth : Int((2 * knee(rate: rate)).rounded(.up))
                    next = min(2 * depth, max(depth + 1, bound))
                    why = .rising
                } else if meanBytes <= Self.latencyBoundBytes {
                    // No drain: emptying the pool costs two replies' time, a good part of a short
                    // run, and the steady rule below settles these from here.
                    phase = .steady
                    why = .full
                } else {
                    phase = .draining
                    plateauRate = max(rate, previousRate)
                    drainedAt = nil
                    next = 1
                    why = .draining
                }
            case .draining:
                break
            case .steady:
                (next, why) = steady(rate: rate, limited: limited)
            }
        }
        let lowered = phase == .steady && next < depth && meanBytes <= Self.latencyBoundBytes
        loweredFrom = lowered ? depth : 0
        loweredRate = rate
        set(next, why, now: now, limited: limited)
        previousRate = rate
        restartWindow(now)
    }

    /// The steady rule for one window: towards `headroom × knee`, by at most a quarter up (only
    /// when every slot was busy) and half down; a fall that cost throughput is undone.
    private mutating func steady(rate: Double, limited: Bool) -> (Int, Reason) {
        let proposed = Int((headroom * knee(rate: rate)).rounded(.up))
        // Halving the depth costs at most half the rate; a bigger fall is the link changing.
        if loweredFrom > depth, rate < 0.85 * loweredRate, rate >= 0.45 * loweredRate {
            keepAtLeast = loweredFrom
            return (loweredFrom, .needed)
        }
        if proposed > depth, limited {
            return (min(proposed, depth + max(1, depth / 4)), .rising)
        }
        guard proposed < depth else { return (depth, reason) }
        let slower = rate < 0.7 * previousRate
        if slower { keepAtLeast = 0 }
        let next = max(proposed, depth / 2, keepAtLeast)
        return (next, slower ? .slower : next > proposed && next == keepAtLeast ? .needed : .full)
    }

    private mutating func set(_ proposed: Int, _ why: Reason, now: Double, limited: Bool) {
        var next = proposed
        var why = why
        if phase != .draining, now >= recoveringUntil { next = max(next, Self.floor(meanBytes: meanBytes)) }
        let memory = memoryLimit
        if next > min(memory, ceiling) {
            next = min(memory, ceiling)
            why = memory < ceiling ? .memory : .maximum
        }
        depth = max(1, next)
        reason = why
        peakDepth = max(peakDepth, depth)
        if limited && phase != .draining {
            settledDepth = depth
            settledReason = reason
        }
    }
}
