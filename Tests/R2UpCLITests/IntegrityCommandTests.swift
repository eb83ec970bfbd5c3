import Foundation
import Testing

/// Issue 28 item 1: every byte a pull writes is checked against the object, and a verification
/// that cannot succeed on a server ends. tools/faultproxy.py sits in front of SeaweedFS and
/// flips bytes in GET bodies or drops the ETag from HEAD replies.
@Suite("Integrity: pulls verify what they write; verification ends")
struct IntegrityCommandTests {
    /// An 11 MiB object in three 5 MiB parts (a multipart ETag "…-3"), pushed by r2up with `db`.
    static func threePartObject(_ folder: borrowing TemporaryFolder, server: CoreServer, db: String) async throws -> (key: String, bytes: Data) {
        let bytes = TwoServerCoreTests.bytes(11 << 20, seed: 9)
        let source = folder.path + "/source.bin"
        try bytes.write(to: URL(fileURLWithPath: source))
        let key = "integrity-\(UUID().uuidString.prefix(8))/three.bin"
        let push = try await CLI.run(
            ["push", source, "--key", key, "--part-size", "5M", "--multipart-threshold", "5M", "--db", db],
            environment: server.environment(home: folder.path))
        #expect(push.status == 0, "\(push.stderr)")
        return (key, bytes)
    }

    /// faultproxy in front of `server` with `arguments`; its log lines with a fault.
    static func proxy(_ server: CoreServer, _ arguments: [String], log: String) async throws -> HelperServer {
        try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server.endpoint.replacingOccurrences(of: "http://", with: ""), "--log", log, "--max-seconds", "300"]
                + arguments)
    }

    static func faults(_ log: String, _ name: String) -> Int {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.contains("\"fault\": \"\(name)\"") }.count
    }

    @Test(
        "bytes flipped in the ranged GETs of a 3-part object are fetched again: the file is the object's bytes",
        arguments: [true, false])
    func flippedRangesFetchedAgain(storeKnowsParts: Bool) async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let db = folder.path + "/db.sqlite"
        let (key, bytes) = try await Self.threePartObject(folder, server: server, db: db)
        let log = folder.path + "/faults.jsonl"
        // Both ranged GETs of the first download are damaged; the second download is clean.
        let proxy = try await Self.proxy(
            server, ["--only-methods", "GET", "--path-regex", "three\\.bin", "--flip-reply", "1.0", "--max-faults", "2"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let dest = folder.path + "/pulled"
        // Without the store's record of the upload, the part sizes come from the server (HEAD partNumber=1).
        let pullDB = storeKnowsParts ? db : folder.path + "/other.sqlite"
        let pull = try await CLI.run(["pull", key, dest + "/", "--json", "--db", pullDB], environment: env)
        #expect(Self.faults(log, "flip-reply") == 2)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(FileManager.default.contents(atPath: dest + "/three.bin") == bytes, "the file on disk is the object's bytes")
        #expect(try PullFixtures.files(under: dest) == ["three.bin"], "no temporary file or record left")
        let rows = try JSONSerialization.jsonObject(with: Data(pull.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.first?["verified"] as? Bool == true, "\(pull.stdout)")
        #expect(!pull.stderr.contains("checked by size only"), "\(pull.stderr)")
    }

    @Test("the HEAD that learns the part sizes answered 403 once: the part sizes are asked again and the bytes checked, not by size only")
    func partLayoutAskedAgain() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let (key, bytes) = try await Self.threePartObject(folder, server: server, db: folder.path + "/db.sqlite")
        let log = folder.path + "/faults.jsonl"
        // The second HEAD (partNumber=1, after the plan's) answered 403 AccessDenied, as a mutated
        // reply did in a random run: with the layout unknown, damaged bytes could not be seen.
        let proxy = try await Self.proxy(server, ["--only-methods", "HEAD", "--script", "2=error:403:AccessDenied"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let dest = folder.path + "/pulled"
        // A store without the upload's record: the part sizes come from the server.
        let pull = try await CLI.run(["pull", key, dest + "/", "--json", "--db", folder.path + "/other.sqlite"], environment: env)
        #expect(Self.faults(log, "error") == 1)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(FileManager.default.contents(atPath: dest + "/three.bin") == bytes, "the file on disk is the object's bytes")
        let rows = try JSONSerialization.jsonObject(with: Data(pull.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.first?["verified"] as? Bool == true, "\(pull.stdout)")
        #expect(!pull.stderr.contains("checked by size only"), "\(pull.stderr)")
    }

    @Test("bytes damaged on every GET: the pull fails (exit 1) after 3 downloads and writes no file")
    func alwaysDamagedFails() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let db = folder.path + "/db.sqlite"
        let (key, _) = try await Self.threePartObject(folder, server: server, db: db)
        let log = folder.path + "/faults.jsonl"
        let proxy = try await Self.proxy(server, ["--only-methods", "GET", "--path-regex", "three\\.bin", "--flip-reply", "1.0"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let dest = folder.path + "/pulled"
        let pull = try await CLI.run(["pull", key, dest + "/", "--db", db], environment: env)
        #expect(pull.status == 1, "\(pull.stderr)")
        #expect(
            pull.stderr.contains("\(key): the download does not match the object: the MD5 of its 3 parts' MD5s is not the ETag")
                && pull.stderr.contains("(fetched 3 times)"), "\(pull.stderr)")
        #expect(Self.faults(log, "flip-reply") == 6, "two ranged GETs per download, three downloads")
        #expect(try PullFixtures.files(under: dest).isEmpty, "nothing kept: no file, no temporary file")
        #expect(pull.stdout.isEmpty)
    }

    @Test("a single-part object whose GET is damaged once comes back whole")
    func singlePartFlip() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let bytes = TwoServerCoreTests.bytes(300_000, seed: 11)
        let source = folder.path + "/one.bin"
        try bytes.write(to: URL(fileURLWithPath: source))
        let key = "integrity-\(UUID().uuidString.prefix(8))/one.bin"
        let push = try await CLI.run(["push", source, "--key", key, "--db", folder.path + "/db.sqlite"], environment: server.environment(home: folder.path))
        #expect(push.status == 0, "\(push.stderr)")
        let log = folder.path + "/faults.jsonl"
        let proxy = try await Self.proxy(
            server, ["--only-methods", "GET", "--path-regex", "one\\.bin", "--flip-reply", "1.0", "--max-faults", "1"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let pull = try await CLI.run(["pull", key, folder.path + "/pulled/", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(Self.faults(log, "flip-reply") == 1)
        #expect(FileManager.default.contents(atPath: folder.path + "/pulled/one.bin") == bytes)
    }

    @Test("a multipart push whose verifying HEAD never carries an ETag ends: exit 1, one clear line, no history row")
    func headWithoutETagEnds() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let log = folder.path + "/faults.jsonl"
        let proxy = try await Self.proxy(server, ["--only-methods", "HEAD", "--drop-etag", "1.0", "--log-all"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let source = folder.path + "/three.bin"
        try TwoServerCoreTests.bytes(11 << 20, seed: 12).write(to: URL(fileURLWithPath: source))
        let key = "integrity-\(UUID().uuidString.prefix(8))/noetag.bin"
        let db = folder.path + "/db.sqlite"
        let started = ContinuousClock.now
        let push = try await CLI.run(
            ["push", source, "--key", key, "--part-size", "5M", "--multipart-threshold", "5M", "--db", db], environment: env)
        #expect(ContinuousClock.now - started < .seconds(120), "bounded")
        #expect(push.status == 1, "\(push.stderr)")
        let lines = push.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(push.stderr)")
        #expect(push.stderr.contains("the server's HEAD replies carry no ETag, which S3 always sends"), "\(push.stderr)")
        #expect(push.stdout.isEmpty)
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        #expect(history.stdout == "[]\n", "no history row for an unconfirmed upload")
        // Not started over: one multipart upload, completed once (a POST with uploadId=).
        let requests = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        let completes = requests.filter { $0.contains("\"method\": \"POST\"") && $0.contains("uploadId=") }.count
        let creates = requests.filter { $0.contains("\"method\": \"POST\"") && $0.contains("?uploads") }.count
        #expect(completes == 1 && creates == 1, "\(completes) completions, \(creates) uploads started")
    }
}
