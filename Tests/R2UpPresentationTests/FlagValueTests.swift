import Foundation
import SigV4
import Testing
@testable import r2up
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpTransfer

@Suite("flag values as people type them")
struct FlagValueTests {
    @Test("durations beyond Int64 milliseconds clamp instead of trapping; the callers' ranges refuse them")
    func hugeDurations() {
        #expect(SyncDuration.parse("1e16") == .seconds(Int64.max))
        #expect(SyncDuration.parse("1e300d") == .seconds(Int64.max))
        #expect(SyncDuration.parse("10s") == .seconds(10))
        #expect(PresignExpiry.seconds("1e16") == .failure(.outOfRange("1e16")))
        #expect(PresignExpiry.seconds("7d") == .success(604_800))
        #expect(PresignExpiry.seconds("-5") == .failure(.outOfRange("-5")))
        #expect(SyncDuration.parse("-2m") == .seconds(-120))
    }

    @Test("durations: 10s, 500ms, 2m, 1h, 1d, plain seconds; junk is nil")
    func durations() {
        #expect(SyncDuration.parse("10s") == .seconds(10))
        #expect(SyncDuration.parse("500ms") == .milliseconds(500))
        #expect(SyncDuration.parse("2m") == .seconds(120))
        #expect(SyncDuration.parse("1h") == .seconds(3600))
        #expect(SyncDuration.parse("1d") == .seconds(86400))
        #expect(SyncDuration.parse("0") == .zero)
        #expect(SyncDuration.parse("1.5") == .milliseconds(1500))
        #expect(SyncDuration.parse("soon") == nil)
        // A negative duration parses; the options refuse it with their range (see HardeningTests).
        #expect(SyncDuration.parse("-1s") == .seconds(-1))
    }

    @Test("sizes and rates parse like rclone's", arguments: [
        ("1048576", Int64(1_048_576)), ("8M", 8 << 20), ("8MiB", 8 << 20), ("500K", 512_000), ("1.5G", 1_610_612_736),
        ("10M/s", 10 << 20), ("5m", 5 << 20),
    ])
    func byteSizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test("nonsense sizes are rejected", arguments: ["", "fast", "-1M", "M", "1X", "1e30"])
    func badSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }
}
