import Foundation
import Testing

/// Issue 28's pending decisions, each through tools/faultproxy.py in front of a real server:
/// one reply missing what S3 sends is tried again (it no longer stops the run); a verifying
/// HEAD that keeps failing says so (not "412 already holds"); a juicefs gateway gets a checksum
/// it verifies.
@Suite("One bad reply: retried, named, verified")
struct OneBadReplyTests {
    static func key(_ name: String) -> String { "bad-reply-\(UUID().uuidString.prefix(8))/\(name)" }

    static func requests(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// A push of `bytes` (as a.m4a) through tools/faultproxy.py with `arguments`, logging to
    /// faults.jsonl in `folder`: the run, its key and database, and the environment it used.
    static func pushThroughProxy(
        _ server: CoreServer, _ arguments: [String], bytes: Data, in folder: borrowing TemporaryFolder,
        extra: [String: String] = [:]
    ) async throws -> (push: CLI.Run, key: String, db: String, env: [String: String], log: String) {
        let source = folder.path + "/a.m4a"
        try bytes.write(to: URL(fileURLWithPath: source))
        let log = folder.path + "/faults.jsonl"
        let proxy = try await IntegrityCommandTests.proxy(server, arguments, log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path).merging(extra) { $1 }
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let key = Self.key("a.m4a")
        let db = folder.path + "/db.sqlite"
        let push = try await CLI.run(["push", source, "--key", key, "--db", db], environment: env)
        return (push, key, db, env, log)
    }

    @Test("one PUT reply without its ETag is tried again: exit 0, the file's bytes, one history row")
    func oneReplyWithoutETagRetried() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(70_000, seed: 21)
        let (push, key, db, env, log) = try await Self.pushThroughProxy(
            server, ["--only-methods", "PUT", "--drop-etag", "1.0", "--max-faults", "1"], bytes: bytes, in: folder)
        #expect(IntegrityCommandTests.faults(log, "drop-etag") == 1)
        #expect(push.status == 0, "\(push.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)])
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["r2Key"] as? String == key, "\(history.stdout)")
    }

    @Test("a PUT stored but its reply lost, the retry's 412 and the HEAD after it answered 404 once: the object is taken, exit 0, one history row")
    func lostReplyThenBadHeadAdopted() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(70_000, seed: 24)
        // Requests: 1 the HEAD naming the server, 2 the PUT (stored, reply reset), 3 its retry
        // (412: the key holds it now), 4 the HEAD after the 412 (answered 404), 5 a HEAD again.
        let (push, key, db, env, log) = try await Self.pushThroughProxy(
            server, ["--script", "2=reset-after,4=error:404:NoSuchKey", "--log-all"], bytes: bytes, in: folder)
        let requests = Self.requests(log)
        #expect(IntegrityCommandTests.faults(log, "reset-after") == 1 && IntegrityCommandTests.faults(log, "error") == 1, "\(requests)")
        #expect(requests.filter { $0.contains("\"status\": 412") }.count == 1, "the retried PUT met its own object: \(requests)")
        #expect(push.status == 0, "\(push.stderr)")
        #expect(!push.stderr.contains("already holds"), "\(push.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)])
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["r2Key"] as? String == key, "\(history.stdout)")
    }

    @Test("a PUT stored but its reply lost, the retry's 412, and every HEAD after it cut: unconfirmed (exit 1, not 'already holds'); r2up retry then takes the object")
    func lostReplyThenHeadsCut() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(11_419, seed: 25)
        // 1 the naming HEAD, 2 the PUT (stored, reply reset), 3 its retry (412), 4-14 the HEAD
        // after the 412, its retries and any other look, each reset before it reaches the server.
        let script = "2=reset-after," + (4...14).map { "\($0)=reset-before" }.joined(separator: ",")
        let (push, key, db, env, log) = try await Self.pushThroughProxy(
            server, ["--script", script, "--log-all"], bytes: bytes, in: folder)
        let requests = Self.requests(log)
        #expect(requests.filter { $0.contains("\"status\": 412") }.count == 1, "\(requests)")
        #expect(push.status == 1, "\(push.stderr) \(requests)")
        #expect(push.stderr.contains("could not be confirmed") && push.stderr.contains("could not be looked at"), "\(push.stderr)")
        #expect(!push.stderr.contains("already holds"), "\(push.stderr)")
        let retry = try await CLI.run(["retry", "--all", "--db", db], environment: server.environment(home: folder.path))
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)])
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["r2Key"] as? String == key, "\(history.stdout)")
    }

    @Test("a multipart push whose verifying HEAD always answers 503 ends: exit 1, one line naming the HEAD, not started over; r2up retry then takes the object")
    func headAlways503() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let log = folder.path + "/faults.jsonl"
        let proxy = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "HEAD", "--error-rate", "1.0", "--error-statuses", "503", "--log-all"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let source = folder.path + "/three.bin"
        try TwoServerCoreTests.bytes(11 << 20, seed: 22).write(to: URL(fileURLWithPath: source))
        let key = Self.key("three.bin")
        let db = folder.path + "/db.sqlite"
        // Over the 8 MiB threshold: two parts of 8 MiB and 3 MiB.
        let push = try await CLI.run(["push", source, "--key", key, "--db", db], environment: env)
        #expect(push.status == 1, "\(push.stderr)")
        let lines = push.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(push.stderr)")
        #expect(push.stderr.contains("\(key): the upload was answered but could not be confirmed: its verifying HEAD kept failing"), "\(push.stderr)")
        #expect(push.stderr.contains("503"), "\(push.stderr)")
        #expect(!push.stderr.contains("412") && !push.stderr.contains("already holds"), "\(push.stderr)")
        let requests = Self.requests(log)
        let creates = requests.filter { $0.contains("\"method\": \"POST\"") && $0.contains("?uploads") }.count
        #expect(creates == 1, "one multipart upload, not started over: \(creates)")
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        #expect(history.stdout == "[]\n", "no history row for an unconfirmed upload")
        // With HEAD answering again, the retry sends the parts, finds the object they make at
        // the key (its multipart ETag) and takes it: no 412, no second object, no upload left.
        let direct = server.environment(home: folder.path)
        let retry = try await CLI.run(["retry", "--all", "--db", db], environment: direct)
        #expect(retry.status == 0, "\(retry.stderr)")
        let after = try await CLI.run(["history", "--json", "--db", db], environment: direct)
        let rows = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["r2Key"] as? String == key, "\(after.stdout)")
        let leftOpen = try await CLI.run(["queue", "--json", "--db", db], environment: direct)
        let queue = try JSONSerialization.jsonObject(with: Data(leftOpen.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(queue["leftOnServer"] as? Int == 0 && (queue["failed"] as? [Any])?.isEmpty == true, "\(leftOpen.stdout)")
    }

    @Test("a juicefs gateway gets Content-MD5, which it verifies: a body damaged once on the way is refused and sent again")
    func juicefsVerifiesWhatItGets() async throws {
        let server = try CoreServer.named(CoreServer.minIO)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(300_000, seed: 23)
        let source = folder.path + "/one.bin"
        try bytes.write(to: URL(fileURLWithPath: source))
        let log = folder.path + "/faults.jsonl"
        let proxy = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "PUT", "--corrupt-body-rate", "1.0", "--max-faults", "1", "--log-all"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let key = Self.key("one.bin")
        let push = try await CLI.run(["push", source, "--key", key, "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(IntegrityCommandTests.faults(log, "corrupt-body") == 1)
        #expect(push.status == 0, "\(push.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)], "the file's bytes, not the damaged ones")
        let puts = Self.requests(log).filter { $0.contains("\"method\": \"PUT\"") }
        #expect(puts.count == 2, "the damaged PUT refused (BadDigest), then sent again: \(puts)")
    }

    /// 12 MiB pushed in parts of 5 MiB, one at a time, to SeaweedFS through faultproxy with
    /// `fault` on the first part: the run, the proxy's log lines, and whether the bucket holds
    /// the file's bytes.
    static func threePartsToSeaweedFS(fault: String, seed: UInt8) async throws -> (push: CLI.Run, log: [String], intact: Bool) {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(12 << 20, seed: seed)
        let source = folder.path + "/three-parts.bin"
        try bytes.write(to: URL(fileURLWithPath: source))
        let log = folder.path + "/faults.jsonl"
        let proxy = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "PUT", "--script", "1=\(fault)", "--log-all"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let key = Self.key("three-parts.bin")
        let push = try await CLI.run(
            ["push", source, "--key", key, "--part-size", "5M", "--multipart-threshold", "5M", "--concurrency", "1",
             "--db", folder.path + "/db.sqlite"],
            environment: env)
        let intact = try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)]
        return (push, Self.requests(log), intact)
    }

    /// SeaweedFS answers a part with the CRC-32C it computed, so r2up checksums each part as it is
    /// sent (the file read once) instead of in a header: a damaged part is stored by the server
    /// (200, not BadDigest), caught by its reply and sent again, and never completed.
    @Test("SeaweedFS: a part damaged once on the way is stored, caught by its reply's CRC-32C and sent again")
    func seaweedPartCaughtByItsReply() async throws {
        let run = try await Self.threePartsToSeaweedFS(fault: "corrupt-body", seed: 29)
        #expect(run.push.status == 0, "\(run.push.stderr)")
        let damaged = run.log.filter { $0.contains("\"fault\": \"corrupt-body\"") }
        #expect(damaged.count == 1 && damaged.first?.contains("partNumber=") == true, "\(damaged)")
        #expect(damaged.first?.contains("\"upstream_status\": 200") == true, "stored by the server, not refused: \(damaged)")
        #expect(run.intact, "the file's bytes, not the damaged ones")
        let parts = run.log.filter { $0.contains("\"method\": \"PUT\"") && $0.contains("partNumber=") }
        #expect(parts.count == 4, "three parts and the damaged one again: \(parts)")
    }

    /// A server named SeaweedFS whose part reply lacks the CRC-32C (a version that answers
    /// otherwise): the part is sent again with its checksum in a header, and so are the others.
    @Test("SeaweedFS: a part reply without its CRC-32C: that part goes again with the checksum in a header, and the rest with it")
    func seaweedPartWithoutItsChecksum() async throws {
        let run = try await Self.threePartsToSeaweedFS(fault: "drop-checksum", seed: 37)
        #expect(run.push.status == 0, "\(run.push.stderr)")
        #expect(run.log.filter { $0.contains("\"fault\": \"drop-checksum\"") }.count == 1)
        #expect(run.intact)
        let parts = run.log.filter { $0.contains("\"method\": \"PUT\"") && $0.contains("partNumber=") }
        #expect(parts.count == 4, "three parts and the unverified one again: \(parts)")
    }
}
