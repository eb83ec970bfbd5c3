import Testing
@testable import r2up

/// Issue 29 item 8: the rate the bars show is smoothed over a few seconds and never above the limit.
@Suite("Progress rate: smoothed, bytes of this run, capped at --bwlimit")
struct RateWindowTests {
    @Test("nothing is shown before a second is measured; then the average over the window")
    func settles() {
        var window = RateWindow(limit: nil)
        let first = window.rate(bytesMoved: 0, at: 100)
        let half = window.rate(bytesMoved: 500_000, at: 100.5)
        let one = window.rate(bytesMoved: 1_000_000, at: 101)
        #expect(first == nil && half == nil)
        #expect(one == 1_000_000)
    }

    @Test("a burst moves the shown rate by its share of five seconds, not by its own rate")
    func smoothed() {
        var window = RateWindow(limit: nil)
        var bytes: Int64 = 0
        var last: Double?
        for tick in 0...40 {  // 4 s at 1 MB/s, sampled ten times a second
            last = window.rate(bytesMoved: bytes, at: Double(tick) / 10)
            bytes += 100_000
        }
        #expect(last.map { abs($0 - 1_000_000) < 1 } == true, "\(String(describing: last))")
        // 2 MB in a tenth of a second (20 MB/s for an instant): the shown rate stays near 1.5 MB/s.
        bytes += 2_000_000
        let burst = window.rate(bytesMoved: bytes, at: 4.1)
        #expect(burst.map { $0 > 1_000_000 && $0 < 1_600_000 } == true, "\(String(describing: burst))")
    }

    @Test("no rate above --bwlimit is ever shown, whatever the samples say")
    func capped() {
        var window = RateWindow(limit: 1_000_000)
        var bytes: Int64 = 0
        for tick in 0...100 {
            // A token bucket's grants arrive in bursts: 3 MB some tenths, none in others.
            if tick % 7 == 0 { bytes += 3_000_000 }
            if let shown = window.rate(bytesMoved: bytes, at: Double(tick) / 10) {
                #expect(shown <= 1_000_000, "tick \(tick): \(shown)")
            }
        }
    }

    @Test("samples older than the window are forgotten: a stalled transfer falls to 0")
    func forgets() {
        var window = RateWindow(limit: nil)
        _ = window.rate(bytesMoved: 0, at: 0)
        _ = window.rate(bytesMoved: 5_000_000, at: 1)
        for second in 2...6 { _ = window.rate(bytesMoved: 5_000_000, at: Double(second)) }
        let stalled = window.rate(bytesMoved: 5_000_000, at: 7)
        #expect(stalled == 0)
    }
}
