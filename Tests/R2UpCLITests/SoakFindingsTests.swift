import Foundation
import Testing
import R2UpTestSupport

/// The soak's findings (issue 28, docs/development/reliability.md "Soak"), each as a user met it:
/// a watch that left jobs failed after a cut, a renamed-then-appended file copied with its old
/// bytes, a copy whose lost reply made its retry fail. The relay is tools/faultproxy.py in front
/// of SeaweedFS; the bucket is read with boto3.
@Suite("soak findings", .serialized)
struct SoakFindingsTests {
    static func prefix(_ label: String) -> String { "soak-findings/\(label)-\(UInt32.random(in: 0...UInt32.max))" }

    static func upstream() throws -> String {
        try CLI.serverEnvironment()["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: "")
    }

    static func faults(_ log: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    static func append(_ text: String, to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    /// tools/faultproxy.py answering `status` to PUTs: the first `faults` of them, or every one.
    static func failingPUTs(_ status: Int, faults: Int? = nil, log: String? = nil) async throws -> HelperServer {
        var arguments = ["--upstream", try upstream(), "--only-methods", "PUT", "--error-rate", "1.0", "--error-statuses", "\(status)"]
        if let faults { arguments += ["--max-faults", "\(faults)"] }
        if let log { arguments += ["--log", log] }
        return try await HelperServer.start("faultproxy.py", arguments + ["--max-seconds", "300"])
    }

    /// `r2up watch` of the folder's library/ (created) through `endpoint` under a new prefix
    /// `label-…/` (JSON events, `--min-age 0s`, `--retries 1`), once it says it is watching.
    static func watchThrough(
        _ endpoint: String, label: String, in folder: borrowing TemporaryFolder
    ) async throws -> (watch: WatchProcess, env: [String: String], scope: String, db: String) {
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_ENDPOINT"] = endpoint
        let scope = Self.prefix(label) + "/"
        let db = folder.path + "/db.sqlite"
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", db, "--json", "--min-age", "0s", "--retries", "1"],
            environment: env, in: folder.path)
        do {
            try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        } catch {
            watch.kill()
            throw error
        }
        return (watch, env, scope, db)
    }

    @Test("watch: uploads failed by a server that answered 503 are tried again within seconds once it answers, not at the rescan")
    func watchRetriesSoon() async throws {
        let folder = try TemporaryFolder()
        // A server restarting behind its front: 503 to the first 12 PUTs, more than one go of both
        // jobs takes (--retries 1: two requests a try, two tries a go). (A refused connection stops
        // the watch, for its service manager to restart it; a reset before the request curl retries itself.)
        let log = folder.path + "/faults.jsonl"
        let relay = try await Self.failingPUTs(503, faults: 12, log: log)
        defer { relay.stop() }
        let (watch, env, scope, db) = try await Self.watchThrough(relay.endpoint, label: "retry", in: folder)
        defer { watch.kill() }
        for name in ["a.m4a", "b.m4a"] { _ = folder.write("library/" + name, "uploaded once the server answers: \(name)") }
        try await watch.waitFor("the failures") { $0.filter { $0["event"] as? String == "failed" }.count >= 2 }
        // The rescan is 10 minutes away: only the watch's own retry (2 s, doubling up to 30 s) uploads them in time.
        try await watch.waitFor("the uploads", timeout: .seconds(45)) { $0.filter { $0["event"] as? String == "uploaded" }.count == 2 }
        #expect(Self.faults(log).filter { $0["fault"] as? String == "error" }.count == 12, "\(Self.faults(log))")
        for name in ["a.m4a", "b.m4a"] {
            #expect(try await TrackIdentityCommandTests.boto3(["get", scope + name]) == "uploaded once the server answers: \(name)")
        }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let queue = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(queue.stdout)")
    }

    @Test("watch: a job failed by the server whose file is deleted before its retry is dropped, not left failed")
    func failedThenGone() async throws {
        let folder = try TemporaryFolder()
        // 503 to the first 6 PUTs: one go of a.m4a (--retries 1: two tries of two requests), then b's first try.
        let log = folder.path + "/faults.jsonl"
        let relay = try await Self.failingPUTs(503, faults: 6, log: log)
        defer { relay.stop() }
        let (watch, env, scope, db) = try await Self.watchThrough(relay.endpoint, label: "gone", in: folder)
        defer { watch.kill() }
        let library = folder.path + "/library"
        _ = folder.write("library/a.m4a", "deleted before its retry")
        try await watch.waitFor("the failure") { $0.contains { $0["event"] as? String == "failed" } }
        // Gone before its next try (2 s away), as a file renamed or moved out during a cut.
        try FileManager.default.removeItem(atPath: library + "/a.m4a")
        _ = folder.write("library/b.m4a", "uploaded once the server answers")
        try await watch.waitFor("b's upload", timeout: .seconds(45)) { $0.contains { $0["event"] as? String == "uploaded" } }
        // a's retry comes 2-4 s after its failure: then its job must be gone from the queue.
        var counts: [String: Any] = [:]
        for _ in 0..<40 {
            let queue = try await CLI.run(["queue", "--json", "--db", db], environment: env)
            let json = try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any]
            counts = json?["counts"] as? [String: Any] ?? [:]
            if counts["failed"] as? Int == 0 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(counts["failed"] as? Int == 0, "\(counts)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", scope + "b.m4a"]) == "uploaded once the server answers")
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test("watch started again: jobs left queued for files deleted or renamed since are dropped, not left interrupted")
    func queuedThenGone() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        for name in ["kept", "deleted", "renamed"] { _ = folder.write("library/\(name).m4a", "take: \(name)") }
        let scope = Self.prefix("queued") + "/"
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        // A stopped run leaves its jobs queued: the server refused every connection (exit 3).
        let refused = try await CLI.run(
            ["sync", library, "--prefix", scope, "--db", db, "--min-age", "0", "--endpoint", "http://127.0.0.1:1"], environment: env)
        #expect(refused.status == 3, "stdout: \(refused.stdout) stderr: \(refused.stderr)")
        let before = UnreachableServerTests.json(try await CLI.run(["queue", "--json", "--db", db], environment: env).stdout)
        #expect((before["counts"] as? [String: Int])?["interrupted"] == 3, "\(before)")
        // Then, as in the soak, one file goes and one is renamed before the next run.
        try FileManager.default.removeItem(atPath: library + "/deleted.m4a")
        try FileManager.default.moveItem(atPath: library + "/renamed.m4a", toPath: library + "/renamed 2.m4a")

        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", db, "--json", "--min-age", "0s"], environment: env, in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let after = UnreachableServerTests.json(try await CLI.run(["queue", "--json", "--db", db], environment: env).stdout)
        #expect(after["counts"] as? [String: Int] == ["queued": 0, "uploading": 0, "interrupted": 0, "failed": 0], "\(after)")
        for name in ["kept", "renamed 2"] {
            let expected = name == "kept" ? "take: kept" : "take: renamed"
            #expect(try await TrackIdentityCommandTests.boto3(["get", scope + name + ".m4a"]) == expected)
        }
    }

    @Test("watch: an upload whose verifying HEAD failed while the server restarted is taken once it answers, not left failed for good")
    func unconfirmedRetried() async throws {
        let folder = try TemporaryFolder()
        // The server behind its front answers 500 to the two HEADs of the check (--retries 1:
        // two requests a try), as SeaweedFS did for seconds after a restart in the soak.
        let log = folder.path + "/faults.jsonl"
        let relay = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", try Self.upstream(), "--only-methods", "HEAD", "--error-rate", "1.0", "--error-statuses", "500",
             "--max-faults", "2", "--log", log, "--max-seconds", "300"])
        defer { relay.stop() }
        let (watch, env, scope, db) = try await Self.watchThrough(relay.endpoint, label: "unconfirmed", in: folder)
        defer { watch.kill() }
        _ = folder.write("library/a.m4a", "stored while the server restarted")
        try await watch.waitFor("the upload", timeout: .seconds(45)) { $0.contains { $0["event"] as? String == "uploaded" } }
        #expect(Self.faults(log).filter { $0["fault"] as? String == "error" }.count == 2, "\(Self.faults(log))")
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let queue = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(queue.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", scope + "a.m4a"]) == "stored while the server restarted")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        #expect(history.stdout.split(separator: "\n").filter { $0.contains(scope + "a.m4a") }.count == 1, "\(history.stdout)")
    }

    @Test("a moved track appended before its copy ran: the file's new bytes are uploaded, the old object is not copied")
    func movedThenAppended() async throws {
        let folder = try TemporaryFolder()
        let take = try await SyncedTake("appended", in: folder)
        let (library, db, prefix, env) = (take.library, take.db, take.prefix, take.env)
        try FileManager.default.moveItem(atPath: library + "/take.m4a", toPath: library + "/take 2.m4a")
        // The copy's PUT answered 500: its job waits, retryably, as a copy.
        try await take.syncRefused()

        // Then the file grows: the copy would put the old bytes at the new key.
        try Self.append(", and more", to: library + "/take 2.m4a")
        let run = try await CLI.run(take.sync, environment: env)
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(run.stdout.hasPrefix("sync: 1 uploaded (20 bytes), 0 failed"), "\(run.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/take 2.m4a"]) == "first take, and more")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        let rows = history.stdout.split(separator: "\n").filter { $0.contains("\(prefix)/take 2.m4a") }
        #expect(rows.count == 1 && rows.first?.contains("copy of") == false, "\(history.stdout)")
        let queue = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(queue.stdout)")
    }

    @Test("an appended file whose failed job was dropped while it was moved out: moved back, its new bytes are uploaded")
    func appendedDroppedThenBack() async throws {
        let folder = try TemporaryFolder()
        let take = try await SyncedTake("dropped", in: folder)
        let (library, prefix, env) = (take.library, take.prefix, take.env)
        let away = folder.path + "/take.m4a"
        // The append's upload fails (500, a server restarting): its job waits for a retry.
        try Self.append(", and more", to: library + "/take.m4a")
        try await take.syncRefused()

        // Its folder moved out: the next pass drops the job (nothing to send); then it comes back.
        try FileManager.default.moveItem(atPath: library + "/take.m4a", toPath: away)
        let gone = try await CLI.run(take.sync, environment: env)
        #expect(gone.status == 0, "stdout: \(gone.stdout) stderr: \(gone.stderr)")
        try FileManager.default.moveItem(atPath: away, toPath: library + "/take.m4a")
        let back = try await CLI.run(take.sync, environment: env)
        #expect(back.status == 0, "stdout: \(back.stdout) stderr: \(back.stderr)")
        #expect(back.stdout.hasPrefix("sync: 1 uploaded (20 bytes), 0 failed"), "\(back.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/take.m4a"]) == "first take, and more")
        let queue = try await CLI.run(["queue", "--db", take.db], environment: env)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(queue.stdout)")
    }

    @Test("a copy of a multipart track whose reply was cut off: its retry takes the object the copy made, no 412, 0 bytes sent")
    func copyReplyCut() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        var bytes = Data(count: 11 << 20)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) }
        try bytes.write(to: URL(fileURLWithPath: library + "/mix.flac"))
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("copycut")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db, "--part-size", "5M"]
        let first = try await CLI.run(sync, environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        try FileManager.default.moveItem(atPath: library + "/mix.flac", toPath: library + "/mix (final).flac")

        // The server makes the copy; its reply is cut: r2up does not know it succeeded.
        let log = folder.path + "/relay.jsonl"
        let relay = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", try Self.upstream(), "--only-methods", "PUT", "--script", "1=reset-after",
             "--log", log, "--log-all", "--max-seconds", "300"])
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(sync, environment: env)
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(!run.stderr.contains("412"), "\(run.stderr)")
        #expect(Self.faults(log).contains { $0["fault"] as? String == "reset-after" }, "\(Self.faults(log))")
        let sent = Self.faults(log).filter { ["PUT", "POST"].contains($0["method"] as? String ?? "") }
            .reduce(Int64(0)) { $0 + ((($1["length"] as? NSNumber)?.int64Value) ?? 0) }
        #expect(sent == 0)
        let history = try await CLI.run(["history", "--db", db], environment: env)
        let rows = history.stdout.split(separator: "\n").filter { $0.contains("\(prefix)/mix (final).flac") }
        #expect(rows.count == 1 && rows.first?.hasSuffix("(copy of \(prefix)/mix.flac)") == true, "\(history.stdout)")
        let queue = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(queue.stdout)")
        let state = try await WatchState.read(database: db, prefix: prefix + "/")
        #expect(state.objects[prefix + "/mix (final).flac"] == WatchState.Object(size: bytes.count, sha256: WatchState.sha256(bytes)))
    }
}

/// A library holding take.m4a ("first take"), synced once with `--retries 0`.
struct SyncedTake {
    let library: String
    let db: String
    let prefix: String
    let env: [String: String]
    var sync: [String] { ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db, "--retries", "0"] }

    init(_ label: String, in folder: borrowing TemporaryFolder) async throws {
        library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = folder.write("lib/take.m4a", "first take")
        db = folder.path + "/db.sqlite"
        prefix = SoakFindingsTests.prefix(label)
        env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(sync, environment: env).status == 0)
    }

    /// The sync through a relay answering 500 to every PUT: exit 1, its job failed retryably.
    func syncRefused() async throws {
        let failing = try await SoakFindingsTests.failingPUTs(500)
        defer { failing.stop() }
        var failingEnv = env
        failingEnv["R2UP_ENDPOINT"] = failing.endpoint
        let refused = try await CLI.run(sync, environment: failingEnv)
        #expect(refused.status == 1, "stdout: \(refused.stdout) stderr: \(refused.stderr)")
    }
}
