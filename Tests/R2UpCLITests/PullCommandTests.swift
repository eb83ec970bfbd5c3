import Foundation
import Testing

/// `r2up pull` against the real server, with objects put there by boto3 (a client sharing no code with r2up).
@Suite("r2up pull")
struct PullCommandTests {
    @Test("a prefix pull lands nested keys under DEST below the prefix, byte for byte, no temporary file left")
    func nestedPrefix() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-nested")
        let big = folder.path + "/big.bin"
        try await PullFixtures.randomFile(big, bytes: 20 << 20)
        try await PullFixtures.put(
            [
                (prefix + "album/01 One.m4a", .text("first track")),
                (prefix + "album/disc 2/02 Two.m4a", .text("second track, on disc two")),
                (prefix + "cover.jpg", .text("")),
                (prefix + "album/big.bin", .file(big)),
            ])
        let dest = folder.path + "/dest"
        let run = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: try PullFixtures.env(folder))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(try PullFixtures.files(under: dest) == ["album/01 One.m4a", "album/big.bin", "album/disc 2/02 Two.m4a", "cover.jpg"])
        #expect(PullFixtures.text(dest + "/album/01 One.m4a") == "first track")
        #expect(PullFixtures.text(dest + "/album/disc 2/02 Two.m4a") == "second track, on disc two")
        #expect(PullFixtures.text(dest + "/cover.jpg") == "")
        #expect(try await PullFixtures.sha256(dest + "/album/big.bin") == (try await PullFixtures.sha256(big)))
        #expect(Set(run.stdout.split(separator: "\n").map(String.init)) == Set(["album/01 One.m4a", "album/big.bin", "album/disc 2/02 Two.m4a", "cover.jpg"].map { dest + "/" + $0 }))
        #expect(run.stderr == "Pulled 4 files (20 MB).\n")
    }

    @Test("a single key lands under its own name in a folder (DEST/); a missing name is bad input")
    func singleKey() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-one")
        try await PullFixtures.put([(prefix + "deep/track.flac", .text("flac bytes"))])
        let env = try PullFixtures.env(folder)
        let run = try await CLI.run(PullFixtures.pull([prefix + "deep/track.flac", folder.path + "/d/"], folder), environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(try PullFixtures.files(under: folder.path + "/d") == ["track.flac"])
        let missing = try await CLI.run(PullFixtures.pull([prefix + "nope.flac", folder.path + "/d"], folder), environment: env)
        #expect(missing.status == 2)
        #expect(missing.stderr == "r2up: no object or folder '\(prefix)nope.flac' in bucket '\(try CLI.serverEnvironment()["R2UP_BUCKET"]!)'\n")
    }

    @Test("an identical file is skipped; one edited since its download is refused (exit 1, untouched) unless --overwrite")
    func identicalSkip() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-skip")
        let big = folder.path + "/big.bin"
        try await PullFixtures.randomFile(big, bytes: 12 << 20)
        try await PullFixtures.put([(prefix + "a.m4a", .text("aaaa")), (prefix + "b.m4a", .text("bbbb")), (prefix + "big.bin", .file(big))])
        let env = try PullFixtures.env(folder)
        let dest = folder.path + "/dest"
        let first = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        // Same size, other bytes, edited here after the pull: the user's copy, not r2up's.
        try Data("BBBB".utf8).write(to: URL(fileURLWithPath: dest + "/b.m4a"))
        let edited = try StatusFiles.mtimeNs(dest + "/b.m4a")
        let refused = try await CLI.run(PullFixtures.pull([prefix, dest, "--json"], folder), environment: env)
        // 1, not 2: the command was right and the rest was pulled; one file could not be (DESIGN §3).
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "r2up: \(dest)/b.m4a: changed here since r2up last uploaded or downloaded it; not replaced (--overwrite replaces it)\n")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [[String: Any]])
        let results = Dictionary(uniqueKeysWithValues: rows.map { ($0["key"] as! String, $0["result"] as! String) })
        #expect(results == [prefix + "a.m4a": "skipped", prefix + "big.bin": "skipped"])
        #expect(PullFixtures.text(dest + "/b.m4a") == "BBBB")
        #expect(try StatusFiles.mtimeNs(dest + "/b.m4a") == edited)

        let overwrite = try await CLI.run(PullFixtures.pull([prefix, dest, "--overwrite"], folder), environment: env)
        #expect(overwrite.status == 0, "stderr: \(overwrite.stderr)")
        #expect(overwrite.stdout == dest + "/b.m4a\n")
        #expect(PullFixtures.text(dest + "/b.m4a") == "bbbb")
        let quiet = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(quiet.stdout.isEmpty)
        #expect(quiet.stderr == "Pulled 0 files (0 bytes); 3 identical skipped.\n")
    }

    @Test("a file only touched since its download (same bytes as the track's ETag) is r2up's copy: a newer object replaces it")
    func touchedNotEdited() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-touched")
        try await PullFixtures.put([(prefix + "t.m4a", .text("first take"))])
        let env = try PullFixtures.env(folder)
        let dest = folder.path + "/dest"
        let first = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        // A new mtime, the same bytes; then the object changes in the bucket.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: dest + "/t.m4a")
        try await PullFixtures.put([(prefix + "t.m4a", .text("second take, longer"))])
        let second = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(PullFixtures.text(dest + "/t.m4a") == "second take, longer")
    }

    @Test("a pull over a pushed track edited since its upload is refused; a file r2up never wrote is refused too")
    func editedPushedTrack() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-edited")
        let dir = folder.path + "/album"
        try StatusFiles.make(dir, ["a.bin", "b.bin"])
        let env = try PullFixtures.env(folder)
        let push = try await CLI.run(["push", dir + "/", "--prefix", prefix, "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        // Pushed and unchanged: r2up's own copy may be replaced (here: it is identical, so skipped).
        try Data("edited locally, 100,011 bytes in the issue".utf8).write(to: URL(fileURLWithPath: dir + "/b.bin"))
        let run = try await CLI.run(PullFixtures.pull([prefix, dir], folder), environment: env)
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("r2up: \(dir)/b.bin: changed here since r2up last uploaded or downloaded it"))
        #expect(run.stderr.hasSuffix("Pulled 0 files (0 bytes); 1 identical skipped; 1 failed.\n"))
        #expect(PullFixtures.text(dir + "/b.bin") == "edited locally, 100,011 bytes in the issue")

        // A file r2up never uploaded or downloaded: no copy of r2up's to compare with, so kept.
        let stranger = folder.path + "/other"
        try StatusFiles.make(stranger, ["a.bin"])
        try Data("mine".utf8).write(to: URL(fileURLWithPath: stranger + "/a.bin"))
        let foreign = try await CLI.run(PullFixtures.pull([prefix + "a.bin", stranger], folder), environment: env)
        #expect(foreign.status == 1)
        #expect(foreign.stderr.hasPrefix(
            "r2up: \(stranger)/a.bin: a file r2up has no record of is there; not replaced (--overwrite replaces it)\n"), "\(foreign.stderr)")
        #expect(PullFixtures.text(stranger + "/a.bin") == "mine")
    }

    @Test("keys with '..', a leading '/' or a backslash are refused and write nothing outside DEST")
    func traversalKeys() async throws {
        let folder = try TemporaryFolder()
        // SeaweedFS refuses '..' (InvalidRequest) and folds '\' and a leading '/' into plain paths,
        // which boto3 shows here; a listing stub then serves the hostile keys as R2 or S3 would store them.
        let seaweed = try await PullFixtures.tryPut(["t/../x", "/abs-r2up.txt", "t/a\\b.txt"])
        #expect(seaweed["t/../x"] == "refused")

        let marker = "r2up-abs-\(UInt32.random(in: 0...UInt32.max)).txt"
        let keys = ["t/../../escaped.txt", "t//tmp/\(marker)", "t/a\\..\\..\\win.txt", "t/fine/ok.txt", "t/x/../../up.txt"]
        let stub = try await HelperServer.start("listing_stub.py", keys.flatMap { ["--key", $0] })
        defer { stub.stop() }
        var env = try PullFixtures.env(folder)
        env["R2UP_ENDPOINT"] = stub.endpoint
        let inner = folder.path + "/inner"
        let dest = inner + "/dest"
        let run = try await CLI.run(PullFixtures.pull(["t/", dest], folder), environment: env)
        #expect(run.status == 2, "stderr: \(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        let tail = "; rename the object in the bucket (nothing was written)"
        #expect(lines.contains("r2up: t/../../escaped.txt: refused: a '..' segment would lead outside the destination" + tail))
        #expect(lines.contains("r2up: t/x/../../up.txt: refused: a '..' segment would lead outside the destination" + tail))
        #expect(lines.contains("r2up: t//tmp/\(marker): refused: below the prefix it starts with '/', an absolute path" + tail))
        #expect(lines.contains("r2up: t/a\\..\\..\\win.txt: refused: it contains a backslash, a path separator on Windows" + tail))
        #expect(lines.last == "Pulled 1 file (21 bytes); 4 failed.")
        #expect(try PullFixtures.files(under: folder.path).filter { !$0.hasPrefix("db.sqlite") } == ["inner/dest/fine/ok.txt"])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/" + marker))
        #expect(!FileManager.default.fileExists(atPath: "/" + marker))
    }

    @Test("status --json shows downloaded tracks and a failed download with its reason; retry --all pulls it again")
    func downloadStates() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-state")
        try await PullFixtures.put([(prefix + "ok.m4a", .text("fine")), (prefix + "blocked.m4a", .text("never lands"))])
        let dest = folder.path + "/dest"
        // A folder where a file should go: that download fails, the other succeeds.
        try FileManager.default.createDirectory(atPath: dest + "/blocked.m4a", withIntermediateDirectories: true)
        let env = try PullFixtures.env(folder)
        let run = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("r2up: \(dest)/blocked.m4a: exists and is not a regular file; move it away first\n"))
        let status = try await CLI.run(["status", dest, "--json", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(status.status == 0, "stderr: \(status.stderr)")
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]])
        let tracks = groups.flatMap { ($0["tracks"] as? [[String: Any]]) ?? [] }
        let byPath = Dictionary(uniqueKeysWithValues: tracks.map { ($0["path"] as! String, $0) })
        #expect(byPath[dest + "/ok.m4a"]?["downloadState"] as? String == "downloaded")
        #expect(byPath[dest + "/ok.m4a"]?["icon"] as? String == "downloaded")
        #expect(byPath[dest + "/ok.m4a"]?["key"] as? String == prefix + "ok.m4a")
        #expect(byPath[dest + "/blocked.m4a"]?["downloadState"] as? String == "error")
        #expect(byPath[dest + "/blocked.m4a"]?["icon"] as? String == "downloadError")
        #expect((byPath[dest + "/blocked.m4a"]?["lastError"] as? String)?.contains("not a regular file") == true)

        // Once the way is clear, r2up retry --all pulls the failed download again.
        try FileManager.default.removeItem(atPath: dest + "/blocked.m4a")
        let retry = try await CLI.run(["retry", "--all", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(retry.status == 0, "stderr: \(retry.stderr)")
        #expect(retry.stdout == dest + "/blocked.m4a\n")
        #expect(PullFixtures.text(dest + "/blocked.m4a") == "never lands")
        let after = try await CLI.run(["status", dest, "--json", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(after.stdout.contains("\"downloadError\"") == false)
        #expect(after.stdout.components(separatedBy: "\"downloadState\" : \"downloaded\"").count == 3)
    }
}

extension PullCommandTests {
    @Test("status DIR --remote shows objects with no local file as cloud only; pull makes them downloaded")
    func cloudOnly() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-cloud")
        try await PullFixtures.put([(prefix + "a.m4a", .text("track a")), (prefix + "sub/b.m4a", .text("track b"))])
        let env = try PullFixtures.env(folder)
        let dir = folder.path + "/album"
        let db = ["--db", folder.path + "/db.sqlite"]

        let noPrefix = try await CLI.run(["status", dir, "--remote"] + db, environment: env)
        #expect(noPrefix.status == 2)
        #expect(noPrefix.stderr == "r2up: no track in \(dir) says which prefix it maps to; give --prefix\n")

        let one = try await CLI.run(PullFixtures.pull([prefix + "a.m4a", dir + "/"], folder), environment: env)
        #expect(one.status == 0, "stderr: \(one.stderr)")
        // The prefix is read off the pulled track: its key ends with its path inside the folder.
        let json = try await CLI.run(["status", dir, "--remote", "--json"] + db, environment: env)
        #expect(json.status == 0, "stderr: \(json.stderr)")
        #expect(try PullFixtures.icons(json.stdout) == [dir + "/a.m4a": "downloaded", dir + "/sub/b.m4a": "cloudOnly"])
        let text = try await CLI.run(["status", dir, "--remote", "--prefix", prefix] + db, environment: env)
        #expect(text.stdout.split(separator: "\n").contains { $0.contains("☁") && $0.contains("b.m4a") }, "\(text.stdout)")

        let rest = try await CLI.run(PullFixtures.pull([prefix, dir], folder), environment: env)
        #expect(rest.status == 0, "stderr: \(rest.stderr)")
        #expect(rest.stdout == dir + "/sub/b.m4a\n")
        let after = try await CLI.run(["status", dir, "--remote", "--json"] + db, environment: env)
        #expect(try PullFixtures.icons(after.stdout) == [dir + "/a.m4a": "downloaded", dir + "/sub/b.m4a": "downloaded"])
    }
}

/// Objects put with boto3, files hashed with sha256sum, r2up's arguments.
enum PullFixtures {
    enum Body {
        case text(String)
        case file(String)
    }

    static func scratchPrefix(_ label: String) -> String { "tests/\(label)-\(UInt32.random(in: 0...UInt32.max))/" }

    static func env(_ folder: borrowing TemporaryFolder) throws -> [String: String] {
        CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
    }

    static func pull(_ arguments: [String], _ folder: borrowing TemporaryFolder) -> [String] {
        ["pull"] + arguments + ["--db", folder.path + "/db.sqlite"]
    }

    /// Puts objects with boto3; a file goes through upload_file (multipart above 8 MiB, as aws s3 cp does).
    static func put(_ objects: [(String, Body)]) async throws {
        let list: [[String: String]] = objects.map { key, body in
            switch body {
            case .text(let text): ["key": key, "text": text]
            case .file(let path): ["key": key, "file": path]
            }
        }
        let script = """
            import boto3, json, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            for o in json.loads(sys.argv[1]):
                if "file" in o: s3.upload_file(o["file"], e["R2UP_TEST_BUCKET"], o["key"])
                else: s3.put_object(Bucket=e["R2UP_TEST_BUCKET"], Key=o["key"], Body=o["text"].encode())
            """
        let json = String(decoding: try JSONSerialization.data(withJSONObject: list), as: UTF8.self)
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, json], environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("boto3 put failed: \(run.stderr)") }
    }

    /// Tries to store each key with boto3: "refused", or "stored as KEY" with the key the server listed.
    static func tryPut(_ keys: [String]) async throws -> [String: String] {
        let script = """
            import boto3, json, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            out = {}
            for k in json.loads(sys.argv[1]):
                try:
                    s3.put_object(Bucket=e["R2UP_TEST_BUCKET"], Key=k, Body=b"x")
                    out[k] = "stored"
                except Exception:
                    out[k] = "refused"
            json.dump(out, sys.stdout)
            """
        let json = String(decoding: try JSONSerialization.data(withJSONObject: keys), as: UTF8.self)
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, json], environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("boto3 failed: \(run.stderr)") }
        return try JSONDecoder().decode([String: String].self, from: Data(run.stdout.utf8))
    }

    /// A file of random bytes, written by head(1) off the test pool.
    static func randomFile(_ path: String, bytes: Int) async throws {
        let run = try await ProcessRunner.run("/bin/sh", ["-c", "head -c \(bytes) /dev/urandom > '\(path)'"], environment: [:])
        guard run.status == 0 else { throw HarnessError("cannot write \(path): \(run.stderr)") }
    }

    static func sha256(_ path: String) async throws -> String {
        let run = try await ProcessRunner.run("/usr/bin/sha256sum", [path], environment: [:])
        return String(run.stdout.prefix(64))
    }

    static func text(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Each track's icon name in `status --json` output, by path.
    static func icons(_ json: String) throws -> [String: String] {
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let tracks = groups.flatMap { ($0["tracks"] as? [[String: Any]]) ?? [] }
        return Dictionary(uniqueKeysWithValues: tracks.map { ($0["path"] as! String, $0["icon"] as! String) })
    }

    /// Every file under `root` (hidden ones too), relative and sorted.
    static func files(under root: String) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(path)
            }
        }
        return found.sorted()
    }
}
