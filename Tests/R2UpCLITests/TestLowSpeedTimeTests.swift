import Foundation
import Testing

/// R2UP_TEST_LOW_SPEED_SECONDS, the test-only knob scripts/mutate-run.sh sets so that replies
/// held past the low-speed timeout cost seconds instead of 30 each.
@Suite("Test-only low-speed timeout")
struct TestLowSpeedTimeTests {
    @Test("with R2UP_TEST_LOW_SPEED_SECONDS=2 a PUT reply held 20 s is given up after about 2 s and sent again: exit 0, the file's bytes")
    func heldReplyGivenUpEarly() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(70_000, seed: 28)
        let started = Date()
        let (push, key, _, _, log) = try await OneBadReplyTests.pushThroughProxy(
            server, ["--only-methods", "PUT", "--stall-rate", "1.0", "--stall-seconds", "20", "--max-faults", "1", "--log-all"],
            bytes: bytes, in: folder, extra: ["R2UP_TEST_LOW_SPEED_SECONDS": "2"])
        let seconds = Date().timeIntervalSince(started)
        #expect(IntegrityCommandTests.faults(log, "stall") == 1)
        #expect(push.status == 0, "\(push.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)])
        // Without the knob curl waits out the held reply (20 s, under its 30) and sends one PUT.
        let puts = OneBadReplyTests.requests(log).filter { $0.contains("\"method\": \"PUT\"") }
        #expect(puts.count == 2, "the held PUT given up, then sent again: \(puts)")
        #expect(seconds < 18, "given up before the held reply came: \(seconds) s")
    }
}
