import Testing

@testable import R2UpModel
@testable import R2UpTransfer

/// A closed-loop model of a pool of `depth` requests of `bytes` each over a link of `rate`
/// bytes a second with an unqueued reply time `latency` (a round trip plus the server's time):
/// while the link has room each request takes `latency + bytes/rate`; once `depth` requests
/// fill it they queue and each takes `depth × bytes/rate`. Completions come evenly spaced.
private struct Link {
    var latency: Double
    var rate: Double
    var bytes: Int64

    func seconds(depth: Int) -> Double {
        let alone = latency + Double(bytes) / rate
        return max(alone, Double(depth) * Double(bytes) / rate)
    }

    /// Runs the controller against the link until `until`; returns the time reached.
    func run(_ controller: inout DepthController, from start: Double, until end: Double) -> Double {
        var now = start
        while now < end {
            let depth = controller.depth
            let took = seconds(depth: depth)
            now += took / Double(depth)
            controller.record(bytes: bytes, seconds: took, outcome: .completed, inFlight: depth, now: now)
        }
        return now
    }
}

/// The same link request by request: a request takes `seconds(depth:)` for the number in
/// flight as it starts, so a deeper pool shows in the rate only once its new requests come back,
/// as it does in a real window.
private struct RequestByRequest {
    var link: Link

    /// Runs the controller until `end`; returns each depth it took, in order.
    func run(_ controller: inout DepthController, until end: Double) -> [Int] {
        var running: [(start: Double, finish: Double)] = []
        var depths = [controller.depth]
        var now = 0.0
        while now < end {
            while running.count < controller.depth {
                running.append((now, now + link.seconds(depth: running.count + 1)))
            }
            guard let next = running.indices.min(by: { running[$0].finish < running[$1].finish }) else { break }
            let done = running.remove(at: next)
            now = done.finish
            controller.record(
                bytes: link.bytes, seconds: done.finish - done.start, outcome: .completed, inFlight: running.count + 1, now: now)
            if depths.last != controller.depth { depths.append(controller.depth) }
        }
        return depths
    }
}

@Suite("DepthController: how many requests to keep in flight")
struct DepthControllerTests {
    @Test("a pinned depth never moves: not for a fast link, not for throttling")
    func pinned() {
        var controller = DepthController(pinned: 6)
        controller.start(requestBytes: 16_384, now: 0)
        controller.record(bytes: 16_384, seconds: 0.01, outcome: .throttled, inFlight: 6, now: 1)
        _ = Link(latency: 0.04, rate: 1e9, bytes: 16_384).run(&controller, from: 1, until: 5)
        #expect(controller.depth == 6)
        #expect(controller.reason == .pinned)
        #expect(DepthReport(controller).line == "requests in flight: 6 (pinned by the concurrency option)")
    }

    @Test("a run with fewer requests than its depth says how many were in flight at once")
    func fewerThanTheDepth() {
        var pinned = DepthController(pinned: 6)
        #expect(DepthReport(pinned).line == "requests in flight: none (no upload or download was needed)")
        // A HEAD before a write ends with no news for the depth, but it was in flight.
        var headOnly = DepthController(pinned: 6)
        headOnly.noteInFlight(1)
        #expect(DepthReport(headOnly).line == "requests in flight: at most 1 (the depth allowed 6: pinned by the concurrency option)")
        pinned.record(bytes: 16_384, seconds: 0.01, outcome: .completed, inFlight: 2, now: 1)
        pinned.record(bytes: 16_384, seconds: 0.01, outcome: .completed, inFlight: 1, now: 1.01)
        #expect(DepthReport(pinned).busiest == 2)
        #expect(DepthReport(pinned).line == "requests in flight: at most 2 (the depth allowed 6: pinned by the concurrency option)")
        var adaptive = DepthController()
        adaptive.start(requestBytes: 16_384, now: 0)
        adaptive.record(bytes: 16_384, seconds: 0.01, outcome: .completed, inFlight: 2, now: 0.01)
        adaptive.record(bytes: 16_384, seconds: 0.01, outcome: .completed, inFlight: 1, now: 0.02)
        let report = DepthReport(adaptive)
        #expect(report.busiest == 2 && report.settled > 2)
        #expect(report.line == "requests in flight: at most 2 (the depth allowed \(report.settled): \(report.reason))")
    }

    @Test("HEADs (0-byte requests, as offload sends) run for thousands of replies: the depth grows past the start and never traps")
    func zeroByteRequests() {
        var controller = DepthController()
        controller.start(requestBytes: 0, now: 0)
        let end = Link(latency: 0.04, rate: 1e9, bytes: 0).run(&controller, from: 0, until: 30)
        #expect(end >= 30)
        #expect(controller.depth >= 4)
        #expect(controller.peakDepth >= 128)
    }

    @Test("the low-speed limit follows the measured link: a 64th of a request's share, so a link at a tenth of its rate trips nothing")
    func lowSpeedLimit() {
        var controller = DepthController()
        #expect(controller.lowSpeedLimit == 1, "nothing measured: only a full stall counts")
        let rate = 2.5e6  // 20 Mbit/s
        _ = Link(latency: 0.04, rate: rate, bytes: 3 << 20).run(&controller, from: 0, until: 60)
        let share = rate / Double(controller.depth)
        #expect(controller.lowSpeedLimit > 1)
        #expect(Double(controller.lowSpeedLimit) < share / 10 / 2, "limit \(controller.lowSpeedLimit), share \(share)")
        var fast = DepthController()
        _ = Link(latency: 0.001, rate: 1e10, bytes: 64 << 20).run(&fast, from: 0, until: 10)
        #expect(fast.lowSpeedLimit == DepthController.lowSpeedCeiling)
        var pinned = DepthController(pinned: 8)
        _ = Link(latency: 0.04, rate: rate, bytes: 3 << 20).run(&pinned, from: 0, until: 10)
        #expect(pinned.lowSpeedLimit == 1)
    }

    @Test("the start is sized to the first request: 2 MiB in flight, between the floor and 128, within the memory budget")
    func startingDepth() {
        func start(_ bytes: Int64) -> Int {
            var controller = DepthController()
            controller.start(requestBytes: bytes, now: 0)
            return controller.depth
        }
        #expect(start(1) == 128)
        #expect(start(16_384) == 128)
        #expect(start(65_536) == 32)
        #expect(start(256 << 10) == 8)
        #expect(start(1 << 20) == 8)
        #expect(start(3 << 20) == 8)
        #expect(start(8 << 20) == 2)
        #expect(start(200 << 20) == 2)
    }

    @Test("the floor and the memory cap follow the request size")
    func bounds() {
        #expect(DepthController.floor(meanBytes: 16_384) == 4)
        #expect(DepthController.floor(meanBytes: Double(3 << 20)) == 2)
        #expect(DepthController.floor(meanBytes: Double(8 << 20)) == 2)
        // 12 MiB over (44 KiB + the upload buffer, 16-64 KiB).
        #expect(DepthController.memoryCap(meanBytes: 16_384) == 204)
        #expect(DepthController.memoryCap(meanBytes: Double(32 << 10)) == 161)
        #expect(DepthController.memoryCap(meanBytes: Double(3 << 20)) == 113)
        // With resident memory measured, 12 MiB over the upload buffers alone.
        #expect(DepthController.memoryCap(meanBytes: 16_384, measured: true) == 512)
        #expect(DepthController.memoryCap(meanBytes: Double(3 << 20), measured: true) == 192)
    }

    @Test("small requests where latency dominates: deep, up to what the memory budget allows")
    func smallRequestsGoDeep() {
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        _ = Link(latency: 0.24, rate: 1e10, bytes: 16_384).run(&controller, from: 0, until: 3)
        #expect(controller.depth == 204)
        #expect(controller.reason == .memory)
        #expect(controller.settledDepth == 204)
    }

    @Test("resident memory measured: small requests start at 256, grow to the room it leaves, and never pass it")
    func measuredMemory() {
        let mib: Int64 = 1 << 20
        // 46 MiB resident before the first request: (61 - 46) MiB / 40 KiB = 384 more.
        var controller = DepthController()
        controller.noteResident(46 * mib, inFlight: 0)
        controller.start(requestBytes: 16_384, now: 0)
        #expect(controller.memoryRoom == 384)
        #expect(controller.depth == 256)
        #expect(controller.reason == .starting)
        // Replies at 240 ms: the rate rises with the depth, which stops at the room.
        _ = Link(latency: 0.24, rate: 1e10, bytes: 16_384).run(&controller, from: 0, until: 3)
        #expect(controller.depth == 384)
        #expect(controller.reason == .memory)
        // 52 MiB resident: room for 230 more, and the start is that.
        var tight = DepthController()
        tight.noteResident(52 * mib, inFlight: 0)
        tight.start(requestBytes: 16_384, now: 0)
        #expect(tight.depth == 230)
        #expect(tight.reason == .memory)
        // Fewer running between two waves, memory under the limit: the depth stays.
        controller.noteResident(60 * mib, inFlight: 30)
        #expect(controller.depth == 384)
        // Memory over the limit (63 MiB with 300 running: 17 MiB over the idle reading where 15
        // were allowed): down to that share of the 300, 264.
        controller.noteResident(63 * mib, inFlight: 300)
        #expect(controller.depth == 264)
        #expect(controller.reason == .memory)
        // Further over with 2 left running: 24 MiB went to the 300, so 15 MiB keep 187 of them.
        // What finished requests freed is reused, not given back, so the depth stays there as
        // requests finish; it used to walk down to the floor of 4, and a TLS push of 1,000 small
        // files then took 47.7 s instead of 2.4.
        controller.noteResident(70 * mib, inFlight: 2)
        #expect(controller.depth == 187)
        controller.noteResident(70 * mib, inFlight: 1)
        #expect(controller.depth == 187)
        // A few big requests over the limit (the scan's memory counted as theirs): a share of
        // them, not the floor. 8 in flight, 2 MiB over the 15 allowed: 7.
        var few = DepthController()
        few.noteResident(46 * mib, inFlight: 0)
        few.start(requestBytes: 3 << 20, now: 0)
        few.noteResident(63 * mib, inFlight: 8)
        #expect(few.depth == 7)
        // Little resident: the ceiling (512) bounds it, and big requests keep their start of eight.
        var roomy = DepthController()
        roomy.noteResident(20 * mib, inFlight: 0)
        roomy.start(requestBytes: 16_384, now: 0)
        #expect(roomy.depth == 256)
        _ = Link(latency: 0.24, rate: 1e10, bytes: 16_384).run(&roomy, from: 0, until: 3)
        #expect(roomy.depth == 512)
        #expect(roomy.reason == .maximum)
        var big = DepthController()
        big.noteResident(20 * mib, inFlight: 0)
        big.start(requestBytes: 3 << 20, now: 0)
        #expect(big.depth == 8)
        // A process already at 70 MiB with nothing in flight (a daemon over a big library): its
        // requests may still add 8 MiB, ~200 small ones.
        var daemon = DepthController()
        daemon.noteResident(70 * mib, inFlight: 0)
        daemon.start(requestBytes: 16_384, now: 0)
        #expect(daemon.memoryRoom == 204)
        #expect(daemon.depth == 204)
        // A pinned depth holds where memory leaves room for it...
        var fits = DepthController(pinned: 100)
        fits.noteResident(44 * mib, inFlight: 0)
        #expect(fits.depth == 100 && fits.reason == DepthController.Reason.pinned)
        // ...and comes down to the limit's share where it does not: 300 × 61/70.
        var pinned = DepthController(pinned: 300)
        pinned.noteResident(70 * mib, inFlight: 300)
        #expect(pinned.depth == 261)
        #expect(pinned.reason == .memory)
        // A pin that the fixed budget always allows holds even in a big process (8 MiB / 40 KiB).
        var small = DepthController(pinned: 8)
        small.noteResident(40 * mib, inFlight: 0)
        small.noteResident(200 * mib, inFlight: 8)
        #expect(small.depth == 8)
        var floor = DepthController(pinned: 300)
        floor.noteResident(40 * mib, inFlight: 0)
        floor.noteResident(200 * mib, inFlight: 300)
        #expect(floor.depth == 204)
    }

    @Test("a pinned depth over TLS stays within the memory budget: 512 asked, 181 fit, and -v says both")
    func pinnedWithinMemory() {
        let mib: Int64 = 1 << 20
        var pinned = DepthController(pinned: 512, requestMemory: DepthController.residentPerTLSRequest)
        // (61 - 44) MiB / 96 KiB = 181 before the first request.
        pinned.noteResident(44 * mib, inFlight: 0)
        #expect(pinned.depth == 181)
        pinned.record(bytes: 16_384, seconds: 0.2, outcome: .completed, inFlight: 181, now: 1)
        #expect(DepthReport(pinned).line
            == "requests in flight: 181 (pinned by the concurrency option at 512; the most that fit the memory budget)")
        // Room again (the requests took less than expected): 181 + 11 MiB / 96 KiB; never past the pin.
        pinned.noteResident(50 * mib, inFlight: 181)
        #expect(pinned.depth == 298)
        pinned.noteResident(10 * mib, inFlight: 0)
        #expect(pinned.depth == 512 && pinned.reason == DepthController.Reason.pinned)
    }

    @Test("over TLS a request costs 96 KiB: the start fits the memory, and the depth follows what readings show")
    func memoryOverTLS() {
        let mib: Int64 = 1 << 20
        // 44 MiB resident before the first request: (61 - 44) MiB / 96 KiB = 181 (256 over plain HTTP).
        var controller = DepthController(requestMemory: DepthController.residentPerTLSRequest)
        controller.noteResident(44 * mib, inFlight: 0)
        controller.start(requestBytes: 16_384, now: 0)
        #expect(controller.depth == 181)
        #expect(controller.reason == .memory)
        var plain = DepthController()
        plain.noteResident(44 * mib, inFlight: 0)
        plain.start(requestBytes: 16_384, now: 0)
        #expect(plain.depth == 256)
        // The 181 took 18 MiB where 17 were allowed: 170 of them fit; and so it stays as they finish.
        controller.noteResident(62 * mib, inFlight: 181)
        #expect(controller.depth == 170)
        controller.noteResident(62 * mib, inFlight: 12)
        #expect(controller.depth == 170)
        // Under the limit the expected cost counts: 16 in flight at 58 MiB leave room for 32 more.
        var few = DepthController(requestMemory: DepthController.residentPerTLSRequest)
        few.noteResident(44 * mib, inFlight: 0)
        few.noteResident(58 * mib, inFlight: 16)
        #expect(few.memoryRoom == 48)
    }

    @Test("small requests to a busy server (each reply twice the luckiest): deep enough for its full rate")
    func smallRequestsOnABusyServer() {
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        // One lucky 45 ms reply; after it the server answers in 90 ms and at most 400 a second.
        controller.record(bytes: 16_384, seconds: 0.045, outcome: .completed, inFlight: 128, now: 0.045)
        let server = Link(latency: 0.09 - 1 / 400, rate: 400 * 16_384, bytes: 16_384)
        _ = server.run(&controller, from: 0.045, until: 3)
        // Full rate takes 400/s × 90 ms = 36 in flight; 4 × 400/s × 45 ms = 72 keeps it. The 1.25
        // for big requests would settle at 1.25 × 45/90 of the depth each window: the floor.
        #expect(controller.depth >= 36)
        #expect(controller.depth <= 90)
        #expect(controller.reason == .full)
        #expect(controller.settledDepth >= 36)
    }

    @Test("small requests on a busy machine (the luckiest reply a tenth of the rest): the depth falls only while the rate holds")
    func smallRequestsKeepWhatTheRateNeeds() {
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        controller.record(bytes: 16_384, seconds: 0.001, outcome: .completed, inFlight: 128, now: 0.001)
        // Every other reply takes 10 ms, and the server does at most 1,000 a second: 10 in flight.
        let machine = Link(latency: 0.009, rate: 1_000 * 16_384, bytes: 16_384)
        _ = machine.run(&controller, from: 0.001, until: 5)
        // 4 × 1,000/s × 1 ms = 4 would cost 60% of the rate; the fall from 16 to 8 is undone.
        #expect(controller.depth == 16)
        #expect(controller.reason == .needed)
        #expect(controller.lastRate > 990)
    }

    @Test("3 MiB files on a 20 Mbit/s uplink, 40 ms: three in flight (one sends, the others wait for replies)")
    func bigRequestsOnASlowLink() {
        var controller = DepthController()
        controller.start(requestBytes: 3 << 20, now: 0)
        _ = Link(latency: 0.04, rate: 2.5e6, bytes: 3 << 20).run(&controller, from: 0, until: 120)
        // 2 × (1 + 2.5 MB/s × 40 ms / 3 MiB) = 2.06: three. The start of eight never doubles:
        // its replies (10 s) are far longer than half a second for each in flight.
        #expect(controller.depth == 3)
        #expect(controller.peakDepth == 8)
    }

    @Test("3 MiB files on a fast link (300 MB/s, 70 ms): slow start doubles, then twice the bandwidth-delay product plus one")
    func bigRequestsOnAFastLink() {
        var controller = DepthController()
        controller.start(requestBytes: 3 << 20, now: 0)
        #expect(controller.depth == 8)
        let depths = RequestByRequest(link: Link(latency: 0.07, rate: 3e8, bytes: 3 << 20)).run(&controller, until: 3)
        // Doubling, not growing by one: a window's rate counts replies to requests sent before
        // it grew, so twice the knee had held big requests to +1 a window (2, 3, 4, 5, 6, 7, 10).
        #expect(Array(depths.prefix(4)) == [8, 16, 32, 1], "\(depths)")
        // After the drain to one, 2 × rate × unqueued latency:
        // 2 × 95.4/s × 80.5 ms = 15.4.
        #expect(controller.depth == 16, "\(depths)")
        #expect(controller.settledDepth == 16)
    }

    @Test("3 MiB files on 10 Mbit/s, 20 ms: started at eight, replies of seconds stop slow start at once")
    func bigRequestsStartOnASlowLink() {
        var controller = DepthController()
        controller.start(requestBytes: 3 << 20, now: 0)
        let depths = RequestByRequest(link: Link(latency: 0.02, rate: 1.25e6, bytes: 3 << 20)).run(&controller, until: 240)
        // Doubled on a window's rate, a start of four became 8 and then 16 requests 40 s long on
        // the link, and some were cut as stalled (measured 2026-11-27). Replies slower than half a
        // second for each in flight are time on the wire: deeper only queues.
        #expect(Array(depths.prefix(2)) == [8, 1], "\(depths)")
        #expect(controller.peakDepth == 8, "\(depths)")
        #expect(controller.depth == 3, "\(depths)")
    }

    @Test("64 KiB files, 20 Mbit/s, 240 ms replies: the bandwidth-delay product, then a drop to a tenth brings it down")
    func linkFullThenSlower() {
        var controller = DepthController()
        controller.start(requestBytes: 65_536, now: 0)
        var link = Link(latency: 0.24, rate: 2.5e6, bytes: 65_536)
        let now = link.run(&controller, from: 0, until: 60)
        // 2 × rate × unqueued latency = 2 × 38.1/s × 0.266 s = 20.3.
        #expect(controller.depth == 21)
        #expect(controller.reason == .full)
        #expect(controller.peakDepth == 64)
        #expect(abs(controller.baseLatency - (0.24 + 65_536 / 2.5e6)) < 1e-9)
        link.rate = 2.5e5
        _ = link.run(&controller, from: now, until: now + 60)
        #expect(controller.depth == 4)
        #expect(controller.settledDepth == 4)
    }

    @Test("1 MiB files on a fast link: capped so the requests fit the memory budget")
    func memoryCap() {
        var controller = DepthController()
        controller.start(requestBytes: 1 << 20, now: 0)
        _ = Link(latency: 0.24, rate: 1e10, bytes: 1 << 20).run(&controller, from: 0, until: 10)
        #expect(controller.depth == 113)
        #expect(controller.reason == .memory)
    }

    @Test("where open files are few (a ceiling of 42) the depth stays under the ceiling")
    func ceiling() {
        var controller = DepthController(ceiling: 42)
        controller.start(requestBytes: 16_384, now: 0)
        #expect(controller.depth == 42)
        _ = Link(latency: 0.24, rate: 1e10, bytes: 16_384).run(&controller, from: 0, until: 3)
        #expect(controller.depth == 42)
        #expect(controller.reason == .maximum)
    }

    @Test("throttling halves at once, at most once a second, then grows by one a window")
    func throttled() {
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        #expect(controller.depth == 128)
        controller.record(bytes: 16_384, seconds: 0.04, outcome: .throttled, inFlight: 128, now: 0.04)
        #expect(controller.depth == 64)
        #expect(controller.reason == .throttled)
        // The replies to requests sent before the cut say nothing new.
        controller.record(bytes: 16_384, seconds: 0.04, outcome: .throttled, inFlight: 200, now: 0.5)
        #expect(controller.depth == 64)
        controller.record(bytes: 16_384, seconds: 0.04, outcome: .throttled, inFlight: 64, now: 1.05)
        #expect(controller.depth == 32)
        #expect(controller.throttledReplies == 3)
        #expect(controller.cuts == 2)
        // A timeout cuts by a quarter.
        controller.record(bytes: 16_384, seconds: 30, outcome: .failed, inFlight: 32, now: 2.1)
        #expect(controller.depth == 24)
        // Then, within the recovery time, +1 a window while every slot is busy.
        let end = Link(latency: 0.04, rate: 1e10, bytes: 16_384).run(&controller, from: 2.1, until: 2.6)
        #expect(controller.reason == .recovering)
        // At most one a window of at least 50 ms: ten in half a second.
        #expect(controller.depth > 24 && controller.depth <= 35)
        // After it, growth by a quarter a window again.
        _ = Link(latency: 0.04, rate: 1e10, bytes: 16_384).run(&controller, from: end, until: 9)
        #expect(controller.depth == 204)
        #expect(DepthReport(controller).line.contains("3 throttled replies, 1 timeouts or resets, 3 cuts"))
    }

    @Test("work that does not fill the pool teaches nothing: the depth stays")
    func notLimited() {
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        var now = 0.0
        for _ in 0..<200 {
            now += 0.01
            controller.record(bytes: 16_384, seconds: 0.04, outcome: .completed, inFlight: 3, now: now)
        }
        #expect(controller.depth == 128)
    }
}
