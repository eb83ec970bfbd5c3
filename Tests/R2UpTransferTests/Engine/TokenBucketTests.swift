import Foundation
import Testing

@testable import R2UpTransfer

/// Issue 29 item 8: `--bwlimit` paces in chunks, not in the few hundred bytes that trickle in
/// between two read callbacks.
@Suite("Bandwidth token bucket")
struct TokenBucketTests {
    @Test("every grant is 0 or at least 16 KiB (or all that was asked), and the rate holds over a second", arguments: [
        Int64(64 << 10), 500_000, 10 << 20,
    ])
    func chunks(rate: Int64) {
        var now: UInt64 = 1_000_000_000
        var bucket = TokenBucket(rate: rate, now: now)
        var sent = 0
        var grants = 0
        // curl asks for 64 KiB every 50 µs, as a fast loopback does.
        for _ in 0..<200_000 {
            now += 50_000
            let granted = bucket.take(64 << 10, now: now)
            #expect(granted == 0 || granted >= 16 << 10, "granted \(granted) bytes")
            sent += granted
            if granted > 0 { grants += 1 }
        }
        // 10 s: the rate, plus at most the quarter-second (or one chunk) burst it starts with.
        let burst = max(Double(rate) / 4, Double(bucket.chunk))
        #expect(Double(sent) <= Double(rate) * 10 + burst + 1, "sent \(sent) at \(rate)")
        #expect(Double(sent) >= Double(rate) * 10 * 0.95, "sent \(sent) at \(rate)")
        #expect(grants <= Int(Double(sent) / Double(16 << 10)) + 1)
    }

    @Test("a small request is granted whole once its bytes are there")
    func smallRequest() {
        var bucket = TokenBucket(rate: 1 << 20, now: 0)
        #expect(bucket.take(100, now: 0) == 100)
        #expect(bucket.wait(now: 0) == 0)
    }
}
