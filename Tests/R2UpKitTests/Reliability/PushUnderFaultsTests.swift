import Foundation
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// Issue 5: `r2up push` keeps its promises when the network and the server misbehave.
/// Everything goes through tools/faultproxy.py in front of the real SeaweedFS server.
@Suite("Reliability: push under faults")
struct PushUnderFaultsTests {
    @Test("push DIR of 100 small files and two 40 MiB files survives resets, errors and stalls; nothing lost")
    func pushFolderUnderFaults() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("faults")
        let directory = try TestDirectory()
        let album = directory.path + "/album"
        var sizes: [String: Int] = [:]
        for index in 1...100 { sizes[String(format: "track %03d.m4a", index)] = 1024 + index * 997 }
        sizes["mixes/long mix A.flac"] = 40 << 20
        sizes["mixes/long mix B.flac"] = 40 << 20
        let expected = try await RandomFiles.write(sizes, in: album, keyPrefix: scope)  // key → sha256
        let proxy = try await FaultProxy(server: server, arguments: Self.issueFiveFaults(seed: 2026))
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let started = Date()
        let run = try await Subprocess.run(
            R2UpBinary.path, ["push", album + "/", "--prefix", scope, "--db", database], environment: environment)
        let seconds = Date().timeIntervalSince(started)
        #expect(run.status == 0, "stderr: \(run.stderrText)")
        #expect(run.stdoutText.split(separator: "\n").count == expected.count)

        let (verified, lost) = try await Self.expectNothingLost(expected, scope: scope, database: database, server: server)

        expectNoSecret(server.secretKey, in: run, database: database)

        let figures = FaultFigures(proxy.injectedFaults(includingClean: true))
        #expect(figures.faults >= 10, "too few faults to prove anything: \(figures)")
        print(
            """
            reliability: push of \(expected.count) files (\(100) small, 2 × 40 MiB) through faultproxy, seed 2026, \
            \(Int(seconds)) s: \(figures.requests) requests, \(figures.faults) faults survived \(figures.byKind), \
            \(figures.retried) requests retried, \(figures.bytesResent) bytes re-sent, \(verified) objects verified, \(lost) lost
            """)
    }

    /// Issue 5's mix, seeded: 10% resets (before, during and after the body), 5% error replies
    /// (500 InternalError, 503 SlowDown, 429), 1% stalls past the 30 s low-speed timeout,
    /// 1% truncated replies, 1% trickled at 1 MB/s; every request logged.
    static func issueFiveFaults(seed: Int) -> [String] {
        [
            "--seed", String(seed), "--log-all", "--reset-before", "0.04", "--reset-during-body", "0.03",
            "--reset-after", "0.03", "--error-rate", "0.05", "--stall-rate", "0.01", "--stall-seconds", "45",
            "--truncate-rate", "0.01", "--trickle-rate", "0.01", "--trickle-bps", "1000000",
        ]
    }

    /// Every object byte for byte (read back by boto3 straight from the server), no multipart
    /// upload left open under `scope`, exactly one history row per file.
    static func expectNothingLost(
        _ expected: [String: String], scope: String, database: String, server: TestServer
    ) async throws -> (verified: Int, lost: Int) {
        let stored = try await IndependentClient.fetch(Array(expected.keys), bucket: server.bucket, server: server)
        let wrong = expected.keys.filter { stored[$0]?.sha256 != expected[$0] }.sorted()
        #expect(wrong.isEmpty, "missing or wrong: \(wrong)")
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
        let history = try Store(path: database).recentUploads(limit: 10_000).map(\.r2Key)
        #expect(history.count == expected.count, "history rows: \(history.count) for \(expected.count) files")
        #expect(Set(history) == Set(expected.keys))
        return (expected.count - wrong.count, wrong.count)
    }

    @Test("a server saying RequestTimeTooSkewed: the CLI takes the offset from its Date header and succeeds")
    func clockSkewThroughCLI() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("skew")
        let directory = try TestDirectory()
        let file = try await RandomFiles.write(["skewed.m4a": 4096], in: directory.path, keyPrefix: "")
            .map { (path: directory.path + "/" + $0.key, sha256: $0.value) }.first!
        // The first request is refused as a server ten minutes ahead would refuse it
        // (SeaweedFS itself allows 15 minutes, so the corrected signature still passes there).
        let proxy = try await FaultProxy(
            server: server,
            arguments: ["--log-all", "--script", "1=error:403:RequestTimeTooSkewed", "--error-date-offset", "600"])
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let run = try await Subprocess.run(
            R2UpBinary.path, ["push", file.path, "--key", scope + "skewed.m4a", "--db", database], environment: environment)
        #expect(run.status == 0, "stderr: \(run.stderrText)")
        #expect(run.stderrText.isEmpty)

        // The refused request was signed with our clock; the ones after it, 600 s ahead.
        let log = proxy.injectedFaults(includingClean: true).filter { $0["method"] != nil }.sorted { ($0["req"] as? Int ?? 0) < ($1["req"] as? Int ?? 0) }
        let dates = log.compactMap { ($0["amzDate"] as? String).flatMap(AMZTime.parse) }
        #expect(log.first?["code"] as? String == "RequestTimeTooSkewed")
        #expect(dates.count >= 2)
        if let first = dates.first {
            #expect(abs(first.timeIntervalSinceNow) < 120)
            for later in dates.dropFirst() {
                #expect(abs(later.timeIntervalSince(first) - 600) < 120, "a later request was signed at \(later)")
            }
        }
        let stored = try await IndependentClient.fetch([scope + "skewed.m4a"], bucket: server.bucket, server: server)
        #expect(stored[scope + "skewed.m4a"]?.sha256 == file.sha256)
        #expect(try Store(path: database).recentUploads(limit: 10).map(\.r2Key) == [scope + "skewed.m4a"])
        expectNoSecret(server.secretKey, in: run, database: database)
    }

    /// The secret is in no output, no database file and no log the run wrote.
    private func expectNoSecret(_ secret: String, in run: Subprocess.Result, database: String) {
        #expect(!(run.stdoutText + run.stderrText).contains(secret))
        for path in [database, database + "-wal", database + "-journal"] {
            guard let bytes = FileManager.default.contents(atPath: path) else { continue }
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secret is stored in \(path)")
        }
    }
}

/// Seeded random files written by Python, off the cooperative pool: generating 80 MiB in a
/// debug build on a test thread would stall every other test's awaits.
enum RandomFiles {
    /// Writes each relative path with its size; returns `keyPrefix + path` → SHA-256.
    static func write(_ sizes: [String: Int], in folder: String, keyPrefix: String) async throws -> [String: String] {
        let script = """
            import hashlib, json, os, random, sys
            request = json.load(sys.stdin)
            out = {}
            for name, size in sorted(request["sizes"].items()):
                path = os.path.join(request["folder"], name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                rng, digest = random.Random(name), hashlib.sha256()
                with open(path, "wb") as f:
                    left = size
                    while left > 0:
                        chunk = rng.randbytes(min(left, 1 << 20))
                        f.write(chunk); digest.update(chunk); left -= len(chunk)
                out[request["prefix"] + name] = digest.hexdigest()
            json.dump(out, sys.stdout)
            """
        let input: [String: Any] = ["sizes": sizes, "folder": folder, "prefix": keyPrefix]
        let result = try await Subprocess.run(
            "/usr/bin/env", ["python3", "-c", script], stdin: try JSONSerialization.data(withJSONObject: input))
        guard result.status == 0 else { throw TestSetupError("writing test files failed: \(result.stderrText)") }
        return try JSONDecoder().decode([String: String].self, from: result.stdout)
    }
}

/// The faultproxy log (`--log-all`) summed up as the README reports it.
struct FaultFigures: CustomStringConvertible {
    var requests = 0
    var faults = 0
    var byKind: [String: Int] = [:]
    /// Requests sent again: the same method and target as an earlier one.
    var retried = 0
    /// Body bytes of requests that failed and had to be sent again in full.
    var bytesResent: Int64 = 0

    init(_ log: [[String: Any]]) {
        var seen: Set<String> = []
        for entry in log {
            guard let method = entry["method"] as? String, let target = entry["target"] as? String else { continue }
            requests += 1
            if !seen.insert(method + " " + target).inserted { retried += 1 }
            guard let fault = entry["fault"] as? String else { continue }
            faults += 1
            byKind[fault, default: 0] += 1
            if fault != "trickle", let length = entry["length"] as? Int, length > 0 { bytesResent += Int64(length) }
        }
    }

    var description: String {
        "\(requests) requests, \(faults) faults \(byKind), \(retried) retried, \(bytesResent) bytes re-sent"
    }
}

extension PushUnderFaultsTests {
    @Test("faultproxy's own self-test: each fault does to a real S3 exchange what it says")
    func faultProxySelfTest() async throws {
        try await ToolSelfTest.run("faultproxy_selftest.py", saying: "faultproxy self-test: OK\n")
    }
}

/// `x-amz-date` values (20261123T010203Z).
enum AMZTime {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: text)
    }
}
