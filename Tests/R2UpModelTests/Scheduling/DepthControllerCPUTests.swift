import Testing

@testable import R2UpModel

/// 16 KiB requests whose replies wait for a busy CPU (the client's, the relay's, the server's,
/// all on a shared machine): a fixed round trip plus time that grows with the requests in flight,
/// `latency + perRequest × d + contention × d²` (the Universal Scalability Law's shape), so
/// throughput `d / seconds(d)` keeps rising with depth and, with contention, falls past a peak.
/// The server may also throttle (429) the replies beyond `throttleAbove` in flight.
private struct BusyLink {
    var latency: Double
    var perRequest: Double
    var contention = 0.0
    var throttleAbove = Int.max

    func seconds(depth: Int) -> Double {
        let d = Double(depth)
        return latency + perRequest * d + contention * d * d
    }

    func rate(depth: Int) -> Double { Double(depth) / seconds(depth: depth) }

    /// The depth with the most completions a second, within the memory cap and below throttling.
    var bestDepth: Int {
        let depths = (1...DepthController.memoryCap(meanBytes: 16_384)).filter { $0 <= throttleAbove }
        return depths.max { rate(depth: $0) < rate(depth: $1) } ?? 1
    }

    /// Runs the controller until `end`; returns the time reached and the depths it took.
    func run(_ controller: inout DepthController, from start: Double, until end: Double) -> (now: Double, depths: ClosedRange<Int>) {
        var now = start
        var count = 0
        var low = Int.max
        var high = 0
        while now < end {
            let depth = controller.depth
            let took = seconds(depth: depth)
            now += took / Double(depth)
            count += 1
            // The replies beyond the limit, spread evenly, are throttled.
            let throttled = depth > throttleAbove && count % depth < depth - throttleAbove
            controller.record(bytes: 16_384, seconds: took, outcome: throttled ? .throttled : .completed, inFlight: depth, now: now)
            low = min(low, controller.depth)
            high = max(high, controller.depth)
        }
        return (now, low...high)
    }
}

@Suite("DepthController on a busy machine: replies that slow down with depth")
struct DepthControllerCPUTests {
    @Test("throughput that peaks (at 45 in flight): settles at 32, 97% of the best, never near the floor")
    func peakedThroughput() {
        let link = BusyLink(latency: 0.04, perRequest: 0.002, contention: 0.000_02)
        #expect(link.bestDepth == 45)
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        let first = link.run(&controller, from: 0, until: 5)
        let after = link.run(&controller, from: first.now, until: 30)
        // Little's law alone (1.25 × rate × the shortest reply) kept 8 here: 53% of the best.
        #expect(controller.settledDepth == 32)
        #expect(controller.settledReason == .lostThroughput)
        #expect(link.rate(depth: controller.settledDepth) >= 0.97 * link.rate(depth: link.bestDepth))
        // Cuts to 16 are tried and undone, probes to 40 too; nothing past the peak's plateau.
        #expect(after.depths == 16...40)
        #expect(controller.peakDepth == 199)
    }

    @Test("throughput that keeps rising, ever more slowly: stays deep (128), 96% of the best")
    func risingThroughput() {
        // 45 ms round trip, 2.8 ms of CPU per request in flight: 316 replies/s at 128, 330 at 199.
        let link = BusyLink(latency: 0.045, perRequest: 0.0028)
        #expect(link.bestDepth == 199)
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        let first = link.run(&controller, from: 0, until: 5)
        let after = link.run(&controller, from: first.now, until: 30)
        // Little's law alone kept 8 here: 36% of the best.
        #expect(controller.settledDepth == 128)
        #expect(link.rate(depth: controller.settledDepth) >= 0.96 * link.rate(depth: link.bestDepth))
        #expect(after.depths == 64...160)
    }

    @Test("a server that throttles beyond 60 in flight: once it has said so, the depth stays at 60 or below for 30 s")
    func throttling() {
        let link = BusyLink(latency: 0.04, perRequest: 0.002, throttleAbove: 60)
        var controller = DepthController()
        controller.start(requestBytes: 16_384, now: 0)
        let first = link.run(&controller, from: 0, until: 5)
        // 128 at the start, 64, then +1 a window to 61: three cuts teach it the limit.
        #expect(controller.cuts == 3)
        let after = link.run(&controller, from: first.now, until: 34)
        #expect(after.depths.upperBound == 60)
        #expect(controller.cuts == 3)
        #expect(controller.settledDepth == 60)
        #expect(controller.settledDepth == link.bestDepth)
        // After 30 s without throttling it probes past the old limit again, and comes back.
        let later = link.run(&controller, from: after.now, until: 120)
        #expect(later.depths.upperBound == 75)
        #expect(controller.settledDepth == 60)
    }
}
