import Foundation
import Testing

/// `r2up offload` against the real server: tracks pushed by r2up, the bucket changed behind its
/// back with boto3, the files and the store checked as a user would.
@Suite("r2up offload")
struct OffloadCommandTests {
    @Test("a folder's verified tracks are freed and show cloud only; history, keys and objects stay; a file never uploaded stays")
    func offloadFolder() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["a/01.m4a", "a/02.m4a", "b/03.m4a"])
        try Data("not uploaded".utf8).write(to: URL(fileURLWithPath: lib.dir + "/a/new.m4a"))
        let run = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map(String.init).sorted() == ["a/01.m4a", "a/02.m4a", "b/03.m4a"].map { lib.dir + "/" + $0 })
        #expect(run.stderr == "Offloaded 3 files (24 bytes freed).\n")
        #expect(try PullFixtures.files(under: lib.dir) == ["a/new.m4a"])
        // The objects are untouched: still there, same bytes.
        #expect(try await OffloadFixtures.objectText(lib.prefix + "a/01.m4a") == "a/01.m4a")

        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(status.status == 0, "stderr: \(status.stderr)")
        #expect(try PullFixtures.icons(status.stdout) == [
            lib.dir + "/a/01.m4a": "cloudOnly", lib.dir + "/a/02.m4a": "cloudOnly", lib.dir + "/b/03.m4a": "cloudOnly",
            lib.dir + "/a/new.m4a": "localOnly",
        ])
        let text = try await CLI.run(lib.r2up(["status", lib.dir]), environment: lib.env)
        #expect(text.stdout.split(separator: "\n").filter { $0.contains("☁") }.count == 3, "\(text.stdout)")
        let history = try await CLI.run(lib.r2up(["history", "--json"]), environment: lib.env)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 3)
        // The catalog agrees: its tracks are the objects, and offloaded tracks are still there.
        let catalog = try await CLI.run(lib.r2up(["catalog", "publish", "--prefix", lib.prefix, "--json"]), environment: lib.env)
        #expect(catalog.status == 0, "stderr: \(catalog.stderr)")
        let published = try #require(try JSONSerialization.jsonObject(with: Data(catalog.stdout.utf8)) as? [String: Any])
        #expect(published["tracks"] as? Int == 3)

        // Again: nothing left to do, nothing sent.
        let again = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(again.status == 0)
        #expect(again.stderr == "Offloaded 0 files (0 bytes freed); 3 already cloud only.\n")
    }

    @Test("--dry-run checks and says what it would free, removing nothing; --older-than and --keep-newest keep tracks")
    func policies() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a", "03.m4a"])
        let dry = try await CLI.run(lib.r2up(["offload", lib.dir, "--dry-run"]), environment: lib.env)
        #expect(dry.status == 0, "stderr: \(dry.stderr)")
        #expect(dry.stdout.split(separator: "\n").sorted() == ["01.m4a", "02.m4a", "03.m4a"].map { "would offload \(lib.dir)/\($0) (6 bytes)" })
        #expect(dry.stderr == "Would offload 3 files (18 bytes to free).\n")
        #expect(try PullFixtures.files(under: lib.dir) == ["01.m4a", "02.m4a", "03.m4a"])

        let young = try await CLI.run(lib.r2up(["offload", lib.dir, "--older-than", "90d"]), environment: lib.env)
        #expect(young.status == 0, "stderr: \(young.stderr)")
        #expect(young.stdout.isEmpty)
        #expect(young.stderr == "Offloaded 0 files (0 bytes freed); kept 3: 3 too recent.\n")

        let newest = try await CLI.run(lib.r2up(["offload", lib.dir, "--keep-newest", "2", "--json"]), environment: lib.env)
        #expect(newest.status == 0, "stderr: \(newest.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(newest.stdout.utf8)) as? [String: Any])
        #expect(json["freedFiles"] as? Int == 1)
        #expect(json["headRequests"] as? Int == 1, "only the track to free is checked")
        #expect((json["kept"] as? [[String: Any]])?.map { $0["reason"] as? String } == ["newest", "newest"])
        #expect(try PullFixtures.files(under: lib.dir).count == 2)
    }

    @Test("only the paths given: a file named alone frees only it, a folder only its tracks; a sibling folder and a look-alike folder name keep theirs")
    func onlyThePathsGiven() async throws {
        let folder = try TemporaryFolder()
        let names = ["a/01.m4a", "a/02.m4a", "ab/03.m4a", "b/04.m4a"]
        let lib = try await OffloadFixtures.library(folder, names)
        let one = try await CLI.run(lib.r2up(["offload", lib.dir + "/b/04.m4a"]), environment: lib.env)
        #expect(one.status == 0, "stderr: \(one.stderr)")
        #expect(one.stdout == lib.dir + "/b/04.m4a\n")
        #expect(try PullFixtures.files(under: lib.dir) == ["a/01.m4a", "a/02.m4a", "ab/03.m4a"])
        // "a" is a prefix of "ab" as text, not as a folder.
        let run = try await CLI.run(lib.r2up(["offload", lib.dir + "/a/"]), environment: lib.env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr == "Offloaded 2 files (16 bytes freed).\n")
        #expect(try PullFixtures.files(under: lib.dir) == ["ab/03.m4a"])
        #expect(PullFixtures.text(lib.dir + "/ab/03.m4a") == "ab/03.m4a")
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(status.stdout) == [
            lib.dir + "/a/01.m4a": "cloudOnly", lib.dir + "/a/02.m4a": "cloudOnly", lib.dir + "/ab/03.m4a": "uploaded",
            lib.dir + "/b/04.m4a": "cloudOnly",
        ])
    }

    @Test("SIGKILL mid-offload: every track is either whole on disk or cloud only, no stray file; a rerun finishes; HEADs only, no GET")
    func killed() async throws {
        let folder = try TemporaryFolder()
        let names = (0..<60).map { String(format: "t%02d.m4a", $0) }
        let lib = try await OffloadFixtures.library(folder, names)
        // HEAD replies held 0.2 s each: the run takes seconds, and is killed in the middle.
        let server = try CLI.serverEnvironment()
        let relay = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "HEAD",
             "--stall-rate", "1.0", "--stall-seconds", "0.2", "--max-seconds", "120", "--log", folder.path + "/relay.jsonl", "--log-all"])
        defer { relay.stop() }
        var slow = lib.env
        slow["R2UP_ENDPOINT"] = relay.endpoint
        let victim = try PullProcess(lib.r2up(["offload", lib.dir, "--concurrency", "2"]), environment: slow)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, victim.isRunning, try PullFixtures.files(under: lib.dir).count > 40 {
            try await Task.sleep(for: .milliseconds(20))
        }
        victim.kill()
        #expect(try await victim.wait() == SIGKILL, "the offload ended before it was killed")
        let left = try PullFixtures.files(under: lib.dir)
        #expect(left.count > 0 && left.count < 60, "\(left.count) files left")
        #expect(left.allSatisfy { names.contains($0) }, "no temporary file: \(left)")
        for name in left { #expect(PullFixtures.text(lib.dir + "/" + name) == name) }
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        let icons = try PullFixtures.icons(status.stdout)
        for name in names {
            #expect(icons[lib.dir + "/" + name] == (left.contains(name) ? "uploaded" : "cloudOnly"))
        }
        let rerun = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: slow)
        #expect(rerun.status == 0, "stderr: \(rerun.stderr)")
        #expect(try PullFixtures.files(under: lib.dir).isEmpty)
        // The killed run and the rerun checked with HEADs only: no object was read.
        let log = try String(contentsOfFile: folder.path + "/relay.jsonl", encoding: .utf8)
        let methods = log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["method"] as? String
        }
        #expect(methods.count >= 60 && Set(methods) == ["HEAD"], "\(methods.count) requests: \(Set(methods))")
    }
}

/// Faults and bad input: one clear line, the documented exit code, not one local file removed.
@Suite("r2up offload: faults and bad input")
struct OffloadFaultTests {
    /// Pushes `01.m4a`, applies `fault`, runs `offload DIR` (plus `extra`) and checks
    /// the status, a line of stderr, and that both files are still there with their bytes.
    func expectKept(
        status expected: Int32, line: (OffloadFixtures.Library) -> String, extra: [String] = [], target: ((OffloadFixtures.Library) -> String)? = nil,
        _ fault: (OffloadFixtures.Library) async throws -> Void
    ) async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a"])
        try await fault(lib)
        let before = try OffloadFixtures.snapshot(lib.dir)
        let run = try await CLI.run(lib.r2up(["offload", target?(lib) ?? lib.dir] + extra), environment: lib.env)
        #expect(run.status == expected, "stderr: \(run.stderr)")
        let wanted = line(lib)
        #expect(run.stderr.split(separator: "\n").contains { $0 == wanted }, "stderr: \(run.stderr)")
        #expect(try OffloadFixtures.snapshot(lib.dir) == before, "a local file was removed or changed")
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: lib.dir)
    }

    @Test("an object deleted behind r2up's back")
    func objectDeleted() async throws {
        try await expectKept(status: 1, line: { "r2up: \($0.dir)/01.m4a: kept: the object '\($0.prefix)01.m4a' is no longer in the bucket (r2up push uploads it again)" }) { lib in
            try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0])", [lib.prefix + "01.m4a"])
        }
    }

    @Test("an object replaced with other bytes of another size")
    func objectReplacedSize() async throws {
        try await expectKept(status: 1, line: { "r2up: \($0.dir)/01.m4a: kept: the object '\($0.prefix)01.m4a' was replaced: its size is 12, the upload's was 6 (r2up push --overwrite uploads this file over it)" }) { lib in
            try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=b'other bytes!')", [lib.prefix + "01.m4a"])
        }
    }

    @Test("an object replaced with the same size: its ETag no longer matches")
    func etagMismatch() async throws {
        try await expectKept(status: 1, line: { lib in
            let md5 = OffloadFixtures.md5("XX.m4a")
            return "r2up: \(lib.dir)/01.m4a: kept: the object '\(lib.prefix)01.m4a' was replaced: its ETag is \(md5), the upload's was \(OffloadFixtures.md5("01.m4a")) (r2up push --overwrite uploads this file over it)"
        }) { lib in
            try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=b'XX.m4a')", [lib.prefix + "01.m4a"])
        }
    }

    @Test("the lines of an object deleted or replaced name what puts it back: push (--overwrite), after which offload frees the files")
    func objectPutBack() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0])", [lib.prefix + "01.m4a"])
        try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=b'XX.m4a')", [lib.prefix + "02.m4a"])
        let kept = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(kept.status == 1, "stderr: \(kept.stderr)")
        #expect(kept.stderr.contains("(r2up push uploads it again)") && kept.stderr.contains("(r2up push --overwrite uploads this file over it)"), "\(kept.stderr)")
        // sync trusts the store: it sends neither, so the lines name push.
        let sync = try await CLI.run(lib.r2up(["sync", lib.dir, "--prefix", lib.prefix, "--min-age", "0"]), environment: lib.env)
        #expect(sync.status == 0 && (sync.stdout + sync.stderr).contains("sync: 0 uploaded"), "\(sync.stdout) \(sync.stderr)")
        let missing = try await CLI.run(lib.r2up(["push", lib.dir + "/01.m4a", "--prefix", lib.prefix]), environment: lib.env)
        #expect(missing.status == 0, "stderr: \(missing.stderr)")
        let replaced = try await CLI.run(lib.r2up(["push", lib.dir + "/02.m4a", "--prefix", lib.prefix, "--overwrite"]), environment: lib.env)
        #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
        let freed = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(freed.status == 0, "stderr: \(freed.stderr)")
        #expect(try PullFixtures.files(under: lib.dir).isEmpty)
        #expect(try await OffloadFixtures.objectText(lib.prefix + "01.m4a") == "01.m4a")
        #expect(try await OffloadFixtures.objectText(lib.prefix + "02.m4a") == "02.m4a")
    }

    @Test("a server that is down: the run stops at once and keeps everything")
    func serverDown() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        var env = lib.env
        env["R2UP_ENDPOINT"] = "http://127.0.0.1:9"  // discard port: nothing listens
        let run = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: env)
        #expect(run.status == 3, "an endpoint that cannot be reached is exit 3, as for push: \(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "one line for the stop, then the summary: \(run.stderr)")
        #expect(lines.first?.hasPrefix("r2up: the endpoint refused the connection") == true && lines.first?.hasSuffix("; the rest was kept") == true, "\(run.stderr)")
        #expect(lines.last == "Offloaded 0 files (0 bytes freed); kept 2: 1 not checked, 1 server error." || lines.last == "Offloaded 0 files (0 bytes freed); kept 2: 2 server error.", "\(run.stderr)")
        #expect(try PullFixtures.files(under: lib.dir) == ["01.m4a", "02.m4a"])
    }

    @Test("a file edited since its upload")
    func edited() async throws {
        try await expectKept(status: 1, line: { "r2up: \($0.dir)/01.m4a: kept: changed since its upload (size or mtime); upload it again first" }) { lib in
            try Data("edited here".utf8).write(to: URL(fileURLWithPath: lib.dir + "/01.m4a"))
        }
    }

    @Test("a file whose bytes changed with its size and mtime kept: the content digest tells")
    func sameSizeOtherBytes() async throws {
        try await expectKept(status: 1, line: { "r2up: \($0.dir)/01.m4a: kept: its bytes are not the ones uploaded (same size and mtime, other content digest)" }) { lib in
            let path = lib.dir + "/01.m4a"
            let mtime = try StatusFiles.mtimeNs(path)
            try Data("ZZ.m4a".utf8).write(to: URL(fileURLWithPath: path))
            let time = timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000))
            guard utimensat(AT_FDCWD, path, [time, time], 0) == 0 else { throw HarnessError("utimensat failed") }
        }
    }

    @Test("a file r2up never uploaded, named: bad input")
    func neverUploaded() async throws {
        try await expectKept(status: 2, line: { "r2up: \($0.dir)/mine.m4a: r2up never uploaded this file; nothing removed" }, target: { $0.dir + "/mine.m4a" }) { lib in
            try Data("mine".utf8).write(to: URL(fileURLWithPath: lib.dir + "/mine.m4a"))
        }
    }

    @Test("a read-only folder")
    func readOnlyFolder() async throws {
        try await expectKept(status: 1, line: { "r2up: \($0.dir)/01.m4a: kept: its folder may not be written (it is read-only)" }) { lib in
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: lib.dir)
        }
    }

    @Test("a path outside the library, and one that does not exist: bad input")
    func outsideLibrary() async throws {
        try await expectKept(status: 2, line: { "r2up: \(($0.dir as NSString).deletingLastPathComponent)/elsewhere: r2up has uploaded no track there; nothing removed" }, target: { lib in
            let elsewhere = (lib.dir as NSString).deletingLastPathComponent + "/elsewhere"
            try? FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: elsewhere + "/x.m4a", contents: Data("x".utf8))
            return elsewhere
        }) { _ in }
        // The whole command is refused when one argument is bad: the good folder keeps its files.
        try await expectKept(status: 2, line: { "r2up: \($0.dir)/nope: no such file or folder; nothing removed" }, target: { $0.dir + "/nope" }) { _ in }
    }

    @Test("--older-than -1d: bad input")
    func negativeAge() async throws {
        try await expectKept(status: 2, line: { _ in "r2up: --older-than '-1d' is not a duration of 0 or more, like 90d, 12h or 30m (see r2up offload --help)" }, extra: ["--older-than", "-1d"]) { _ in }
    }
}

/// A library pushed by r2up, and boto3 to change the bucket behind its back.
enum OffloadFixtures {
    struct Library: Sendable {
        var dir: String
        var prefix: String
        var db: String
        var env: [String: String]

        func r2up(_ arguments: [String]) -> [String] { arguments + ["--db", db] }
    }

    /// Files under `folder/lib` (each holding its own name), pushed under a fresh prefix.
    static func library(_ folder: borrowing TemporaryFolder, _ names: [String]) async throws -> Library {
        let dir = folder.path + "/lib"
        try StatusFiles.make(dir, names)
        let prefix = PullFixtures.scratchPrefix("offload")
        let lib = Library(dir: dir, prefix: prefix, db: folder.path + "/db.sqlite", env: try PullFixtures.env(folder))
        let push = try await CLI.run(lib.r2up(["push", dir + "/", "--prefix", prefix]), environment: lib.env)
        guard push.status == 0 else { throw HarnessError("push failed: \(push.stderr)") }
        return lib
    }

    /// Runs `statement` with boto3's `s3` client, the bucket as `b` and `arguments` as `a`.
    static func boto(_ statement: String, _ arguments: [String]) async throws {
        let script = """
            import boto3, json, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            b = e["R2UP_TEST_BUCKET"]
            a = json.loads(sys.argv[1])
            \(statement)
            """
        let json = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, json], environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("boto3 failed: \(run.stderr)") }
    }

    /// The object's body as text, read with boto3.
    static func objectText(_ key: String) async throws -> String {
        let script = """
            import boto3, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            sys.stdout.write(s3.get_object(Bucket=e["R2UP_TEST_BUCKET"], Key=sys.argv[1])["Body"].read().decode())
            """
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, key], environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("boto3 get failed: \(run.stderr)") }
        return run.stdout
    }

    static func md5(_ text: String) -> String {
        let run = try? ProcessRunner.runBlocking("/bin/sh", ["-c", "printf '%s' '\(text)' | md5sum"])
        return String((run ?? "").prefix(32))
    }

    /// Every file under `root` with its bytes.
    static func snapshot(_ root: String) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for name in try PullFixtures.files(under: root) {
            found[name] = FileManager.default.contents(atPath: root + "/" + name) ?? Data()
        }
        return found
    }
}

extension ProcessRunner {
    /// stdout of a short command, blocking (only for tiny helpers like md5sum).
    static func runBlocking(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
