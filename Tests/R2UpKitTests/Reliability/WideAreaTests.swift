import Foundation
import Testing

@testable import R2UpKit
import R2UpModel
import R2UpTestSupport
import R2UpTransfer

/// Issue 26's faults: `r2up sync` with no flags through tools/wanrelay.py (a wide-area link in
/// front of the real SeaweedFS) when the server throttles and when the link slows down.
/// Each run is bounded well under a minute.
@Suite("Reliability: adaptive depth over a wide-area link", .serialized)
struct WideAreaTests {
    /// `sync --json` through a relay with `relayArguments`; returns the run, its summary's depth,
    /// the relay's figures, after checking every object byte for byte and one history row each.
    private func syncThroughRelay(
        _ label: String, files: [String: Int], relayArguments: [String]
    ) async throws -> (status: Int32, depth: [String: Any], stats: WanRelay.Stats, stderr: String, seconds: Double) {
        let server = try TestServer.require()
        let scope = server.scratchPrefix(label)
        let directory = try TestDirectory()
        let folder = directory.path + "/music"
        let expected = try await RandomFiles.write(files, in: folder, keyPrefix: scope)
        let relay = try await WanRelay(server: server, arguments: relayArguments)
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = relay.endpoint
        let database = directory.path + "/r2up.sqlite"
        let started = Date()
        let run = try await Subprocess.run(
            R2UpBinary.path, ["sync", folder, "--prefix", scope, "--min-age", "0", "--json", "-v", "--db", database],
            environment: environment)
        let seconds = Date().timeIntervalSince(started)
        let stats = try relay.stop()
        _ = try await PushUnderFaultsTests.expectNothingLost(expected, scope: scope, database: database, server: server)
        let summary = (try? JSONSerialization.jsonObject(with: run.stdout)) as? [String: Any]
        let depth = summary?["depth"] as? [String: Any] ?? [:]
        #expect(summary?["uploaded"] as? Int == files.count, "stdout: \(run.stdoutText)")
        return (run.status, depth, stats, run.stderrText, seconds)
    }

    private static func smallFiles(_ count: Int, size: Int) -> [String: Int] {
        var files: [String: Int] = [:]
        for index in 1...count { files[String(format: "track %04d.m4a", index)] = size }
        return files
    }

    @Test("every 20th request answered 503 SlowDown: exit 0, every object right, fewer in flight after, within the retries")
    func slowDownEveryTwentieth() async throws {
        let run = try await syncThroughRelay(
            "wan503", files: Self.smallFiles(800, size: 8192),
            relayArguments: ["--rtt-ms", "40", "--setup-rtts", "2", "--slowdown-every", "20"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stats.faults503 >= 40)
        // Every 503 was retried (at most 4 times per request): no object cost more than its budget.
        #expect(run.stats.requests <= 800 * 5)
        let throttled = run.depth["throttledReplies"] as? Int ?? 0
        let cuts = run.depth["cuts"] as? Int ?? 0
        let peak = run.depth["peak"] as? Int ?? 0
        #expect(throttled == run.stats.faults503, "depth: \(run.depth)")
        #expect(cuts >= 1)
        #expect(run.depth["mode"] as? String == "adaptive")
        // In flight before the first 503 came back, and from a round trip after it to the end.
        let first = try #require(run.stats.firstFaultAt)
        let before = run.stats.mostInFlight(from: 0, to: first + 0.1)
        let after = run.stats.mostInFlight(from: first + 0.3)
        #expect(after < before, "in flight: \(run.stats.inFlight)")
        #expect(peak >= before)
        #expect(run.stderr.contains("requests in flight: settled at"), "stderr: \(run.stderr)")
        print("wan 503: \(run.stats.requests) requests, \(run.stats.faults503) 503s, in flight \(before) before, \(after) after; depth \(run.depth); \(run.seconds) s")
    }

    @Test("the first wave goes as conditional PUTs: one HEAD names the server, not one per file")
    func firstWaveWithoutHeads() async throws {
        let run = try await syncThroughRelay(
            "wanwave", files: Self.smallFiles(300, size: 4096),
            relayArguments: ["--rtt-ms", "40", "--setup-rtts", "2", "--reply-delay-ms", "200"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stats.puts == 300)
        // The one HEAD that named SeaweedFS (which honours If-None-Match) and the folder's listing.
        #expect(run.stats.requests - run.stats.puts <= 3, "\(run.stats.requests) requests, \(run.stats.puts) PUTs")
        #expect(run.stats.putPayloadAgain == 0)
        print("wan wave: \(run.stats.requests) requests, \(run.stats.puts) PUTs; depth \(run.depth); \(run.seconds) s")
    }

    @Test("503 SlowDown every 20th and 429 on a key written within a second: exit 0, every object right")
    func tooManyRequestsPerKey() async throws {
        let run = try await syncThroughRelay(
            "wan429", files: Self.smallFiles(400, size: 8192),
            relayArguments: ["--rtt-ms", "40", "--setup-rtts", "2", "--slowdown-every", "20", "--key-429", "1"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        // A retry a moment after a 503 rewrites its key within the second: some of them meet a 429.
        #expect(run.stats.faults429 >= 1, "faults: \(run.stats.faults503) 503, \(run.stats.faults429) 429")
        #expect(run.stats.requests <= 400 * 5)
        #expect((run.depth["throttledReplies"] as? Int ?? 0) == run.stats.faults503 + run.stats.faults429)
        print("wan 429: \(run.stats.requests) requests, \(run.stats.faults503) 503s, \(run.stats.faults429) 429s; depth \(run.depth); \(run.seconds) s")
    }

    @Test("the uplink drops to a tenth mid-run: the depth comes down, nothing times out or goes twice")
    func linkDropsToATenth() async throws {
        // 30 MiB at 80 Mbit/s, 240 ms replies; after 2.5 s the link runs at 8 Mbit/s.
        let run = try await syncThroughRelay(
            "wandrop", files: Self.smallFiles(120, size: 256 << 10),
            relayArguments: [
                "--rtt-ms", "40", "--setup-rtts", "2", "--reply-delay-ms", "200", "--up-mbit", "80", "--drop-after", "2.5",
            ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let peak = run.depth["peak"] as? Int ?? 0
        let final = run.depth["final"] as? Int ?? 0
        #expect(final < peak, "depth: \(run.depth)")
        #expect(run.depth["cuts"] as? Int == 0, "a timeout or a reset: \(run.depth)")
        #expect(run.stats.putPayloadAgain == 0)
        let before = run.stats.mostInFlight(from: 0, to: 2.5)
        let late = run.stats.mostInFlight(from: run.stats.inFlight.last.map { $0.0 - 3 } ?? 0)
        #expect(late < before, "in flight: \(run.stats.inFlight)")
        print("wan drop: in flight \(before) before the drop, \(late) at the end; depth \(run.depth); \(run.seconds) s")
    }
}

extension WideAreaTests {
    @Test("wanrelay's own self-test: its delays, link, faults and counts do what it says to a real S3 exchange")
    func wanRelaySelfTest() async throws {
        try await ToolSelfTest.run("wanrelay_selftest.py", saying: "wanrelay self-test: OK\n")
    }
}

/// A self-test of a tool in tools/ (the relays the reliability tests stand on), against the test server.
enum ToolSelfTest {
    static func run(_ script: String, saying last: String) async throws {
        let server = try TestServer.require()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let result = try await Subprocess.run(
            "/usr/bin/env", ["python3", root.path + "/tools/" + script], environment: server.environment)
        #expect(result.status == 0, "\(result.stdoutText)\(result.stderrText)")
        #expect(result.stdoutText.hasSuffix(last))
    }
}
