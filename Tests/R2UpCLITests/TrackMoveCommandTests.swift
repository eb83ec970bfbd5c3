import Foundation
import Testing
import R2UpModel
@testable import R2UpStore

/// Issue 14, items 4 and 6, as a user meets them: a library reorganised (an album folder
/// renamed, a file moved) is synced again without sending a byte of any track: each new key
/// is a server-side copy. Requests are counted by tools/faultproxy.py in front of SeaweedFS;
/// the bucket is read with boto3, the store through r2up's commands.
@Suite("r2up sync: moves and renames are server-side copies")
struct TrackMoveCommandTests {
    static func prefix(_ label: String) -> String { "track-moves/\(label)-\(UInt32.random(in: 0...UInt32.max))" }

    /// A counting relay in front of the test server, logging every request.
    static func relay(log: String) async throws -> HelperServer {
        let server = try CLI.serverEnvironment()
        return try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "NONE",
             "--log", log, "--log-all", "--max-seconds", "300"])
    }

    /// The requests the relay saw: method, target and request body length.
    struct Request {
        var method: String
        var target: String
        var length: Int64
    }

    static func requests(_ log: String) throws -> [Request] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let method = object["method"] as? String, let target = object["target"] as? String
            else { return nil }
            return Request(method: method, target: target, length: (object["length"] as? NSNumber)?.int64Value ?? 0)
        }
    }

    /// Starts `arguments` (a sync) through a relay that lets the server answer every PUT (a copy
    /// is one) and holds the reply a minute; returns once `count` replies are held.
    static func syncWithRepliesHeld(_ arguments: [String], environment: [String: String], log: String, until count: Int)
        async throws -> (relay: HelperServer, process: PullProcess)
    {
        let server = try CLI.serverEnvironment()
        let relay = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "PUT",
             "--stall-rate", "1.0", "--stall-seconds", "60", "--log", log, "--max-seconds", "120"])
        var held = environment
        held["R2UP_ENDPOINT"] = relay.endpoint
        let process = try PullProcess(arguments, environment: held)
        func stalls() -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(separatedBy: "\"stall\"").count - 1
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, process.isRunning, stalls() < count { try await Task.sleep(for: .milliseconds(50)) }
        #expect(stalls() >= count, "no copy reached the server")
        return (relay, process)
    }

    @Test("an album of 20 renamed and a file moved between folders: 21 copies, 0 payload bytes, the same bytes at the new keys")
    func renamedAlbum() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        for sub in ["Old Album", "Singles", "Other"] {
            try FileManager.default.createDirectory(atPath: library + "/" + sub, withIntermediateDirectories: true)
        }
        var contents: [String: String] = [:]
        for number in 1...20 {
            let name = "\(number < 10 ? "0" : "")\(number) - Track \(number).m4a"
            contents[name] = "album track \(number) " + String(repeating: "♪", count: number * 37)
            _ = folder.write("lib/Old Album/" + name, contents[name]!)
        }
        _ = folder.write("lib/Singles/single.mp3", "a single, moved later")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("album")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]

        let first = try await CLI.run(sync, environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout.hasPrefix("sync: 21 uploaded"), "\(first.stdout)")

        try FileManager.default.moveItem(atPath: library + "/Old Album", toPath: library + "/New Album (2026)")
        try FileManager.default.moveItem(atPath: library + "/Singles/single.mp3", toPath: library + "/Other/single.mp3")

        // A dry run says what it would copy, and copies nothing.
        let dry = try await CLI.run(sync + ["--dry-run"], environment: env)
        #expect(dry.status == 0, "stderr: \(dry.stderr)")
        let dryLines = dry.stdout.split(separator: "\n")
        #expect(dryLines.contains("would copy \(prefix)/Singles/single.mp3 to \(prefix)/Other/single.mp3 (21 bytes, moved)"), "\(dry.stdout)")
        #expect(dryLines.filter { $0.hasPrefix("would copy ") }.count == 21)
        #expect(dryLines.last?.hasPrefix("sync --dry-run: 0 to upload (0 bytes), 21 to move (copy in the bucket), 0 failed") == true, "\(dry.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/Other/single.mp3"]) == "MISSING")

        let log = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let second = try await CLI.run(sync, environment: env)
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 21 moved (copied in the bucket, 0 bytes sent), 0 failed, 0 unchanged"), "\(second.stdout)")

        let requests = try Self.requests(log)
        let puts = requests.filter { $0.method == "PUT" }
        #expect(puts.count == 21, "\(puts.map(\.target))")
        #expect(requests.filter { $0.method == "PUT" || $0.method == "POST" }.reduce(0) { $0 + $1.length } == 0)

        for (name, text) in contents {
            #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/New Album (2026)/\(name)"]) == text)
            // The old object stays: its URL may be shared.
            #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/Old Album/\(name)"]) == text)
        }
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/Other/single.mp3"]) == "a single, moved later")

        // A third run finds nothing to do.
        let third = try await CLI.run(sync, environment: env)
        #expect(third.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 21 unchanged"), "\(third.stdout)")

        // Everything follows the track: copy-url, status, history.
        let moved = library + "/Other/single.mp3"
        let url = try await CLI.run(["copy-url", moved, "--db", db], environment: env)
        #expect(url.status == 0, "stderr: \(url.stderr)")
        #expect(url.stdout.hasSuffix("/\(prefix)/Other/single.mp3\n"), "\(url.stdout)")
        let status = try await CLI.run(["status", library + "/Other", "--json", "--db", db], environment: env)
        #expect(status.status == 0, "stderr: \(status.stderr)")
        #expect(status.stdout.contains("\"key\" : \"\(prefix)\\/Other\\/single.mp3\"") || status.stdout.contains("\"key\" : \"\(prefix)/Other/single.mp3\""), "\(status.stdout)")
        #expect(status.stdout.contains("\"uploadState\" : \"uploaded\""), "\(status.stdout)")
        // 42 rows (21 uploads, 21 copies made at once, in any order): more than history's default 20.
        let history = try await CLI.run(["history", "--limit", "100", "--db", db], environment: env)
        let copyRow = history.stdout.split(separator: "\n").first { $0.contains("\(prefix)/Other/single.mp3") }
        #expect(copyRow?.hasSuffix("(copy of \(prefix)/Singles/single.mp3)") == true, "\(history.stdout)")
        let json = try await CLI.run(["history", "--json", "--limit", "100", "--db", db], environment: env)
        #expect(json.stdout.contains("\"copiedFrom\" : \"\(prefix)/Singles/single.mp3\""), "\(json.stdout)")
    }

    @Test("--delete-moved: the old object goes once the copy is verified; a file copied elsewhere is known by its digest")
    func deleteMoved() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library + "/a", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: library + "/b", withIntermediateDirectories: true)
        _ = folder.write("lib/a/one.flac", "track one's bytes")
        _ = folder.write("lib/a/two.flac", "track two's bytes")
        // Multipart (over 8 MiB): its digest is the parts' checksums, recorded when the job completed.
        let big = String(repeating: "0123456789abcdef", count: (9 << 20) / 16) + "end"
        _ = folder.write("lib/a/big.flac", big)
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("delete")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync, environment: env).status == 0)

        // one: renamed (same inode); two: written anew elsewhere and the old one deleted (a new
        // inode and mtime: found by size and content digest).
        try FileManager.default.moveItem(atPath: library + "/a/one.flac", toPath: library + "/b/one.flac")
        _ = folder.write("lib/b/two (copy).flac", "track two's bytes")
        try FileManager.default.removeItem(atPath: library + "/a/two.flac")
        _ = folder.write("lib/b/big.flac", big)
        try FileManager.default.removeItem(atPath: library + "/a/big.flac")
        let run = try await CLI.run(sync + ["--delete-moved", "--json"], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.contains("\"copied\" : 3"), "\(run.stdout)")
        #expect(run.stdout.contains("\"movedDeleted\" : 3"), "\(run.stdout)")
        #expect(run.stdout.contains("\"uploadedBytes\" : 0"), "\(run.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/a/one.flac"]) == "MISSING")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/a/two.flac"]) == "MISSING")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/b/one.flac"]) == "track one's bytes")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/b/two (copy).flac"]) == "track two's bytes")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/a/big.flac"]) == "MISSING")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/b/big.flac"]) == big)
    }

    /// `lib/NAME.flac` for each of `names`, holding "track NAME"; the folder's database and the
    /// test server's environment.
    static func library(_ folder: borrowing TemporaryFolder, _ names: [String]) throws -> (path: String, db: String, env: [String: String]) {
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        for name in names { _ = folder.write("lib/\(name).flac", "track \(name)") }
        return (library, folder.path + "/db.sqlite", CLI.environment(server: try CLI.serverEnvironment(), home: folder.path))
    }

    @Test("--delete-moved with another --prefix: a second copy of each file, the first prefix's objects stay")
    func deleteMovedKeepsOtherPrefix() async throws {
        let folder = try TemporaryFolder()
        let (library, db, env) = try Self.library(folder, ["one", "two"])
        let first = Self.prefix("first"), second = Self.prefix("second")
        let sync = ["sync", library, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync + ["--prefix", first], environment: env).status == 0)
        // No file moved: the second prefix gets copies, and --delete-moved has nothing to delete.
        let run = try await CLI.run(sync + ["--prefix", second, "--delete-moved", "--json"], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.contains("\"copied\" : 2"), "\(run.stdout)")
        #expect(run.stdout.contains("\"movedDeleted\" : 0"), "\(run.stdout)")
        for name in ["one", "two"] {
            #expect(try await TrackIdentityCommandTests.boto3(["get", "\(first)/\(name).flac"]) == "track \(name)")
            #expect(try await TrackIdentityCommandTests.boto3(["get", "\(second)/\(name).flac"]) == "track \(name)")
        }
    }

    @Test("sync --delete --dry-run back to an earlier prefix lists the copies it makes and no deletion of their keys, as the real run")
    func dryRunBackToEarlierPrefix() async throws {
        let folder = try TemporaryFolder()
        let (library, db, env) = try Self.library(folder, ["one", "two", "three"])
        let first = Self.prefix("back-a"), second = Self.prefix("back-b")
        let sync = ["sync", library, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync + ["--prefix", first], environment: env).status == 0)
        #expect(try await CLI.run(sync + ["--prefix", second], environment: env).status == 0)
        // Back to the first prefix: three copies onto keys that hold those files' objects already.
        let dry = try await CLI.run(sync + ["--prefix", first, "--delete", "--dry-run"], environment: env)
        #expect(dry.status == 0, "\(dry.stdout)\(dry.stderr)")
        #expect(!dry.stdout.contains("would delete") && !dry.stderr.contains("stale"), "\(dry.stdout)\(dry.stderr)")
        #expect(dry.stdout.components(separatedBy: "would copy ").count - 1 == 3, "\(dry.stdout)")
        let real = try await CLI.run(sync + ["--prefix", first, "--delete", "--json"], environment: env)
        #expect(real.status == 0, "\(real.stderr)")
        #expect(real.stdout.contains("\"copied\" : 3") && real.stdout.contains("\"deletions\" : [\n\n  ]"), "\(real.stdout)")
        for name in ["one", "two", "three"] {
            #expect(try await TrackIdentityCommandTests.boto3(["get", "\(first)/\(name).flac"]) == "track \(name)")
        }
    }

    @Test("copies to another prefix stopped by a wrong secret: the tracks stay uploaded, a push sends nothing, the next sync copies")
    func pushAfterStoppedCopies() async throws {
        let folder = try TemporaryFolder()
        let (library, db, env) = try Self.library(folder, ["one", "two", "three"])
        let push = ["push", library, "--prefix", Self.prefix("stopped"), "--db", db]
        #expect(try await CLI.run(push, environment: env).status == 0)
        var wrong = env
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let elsewhere = Self.prefix("elsewhere")
        let sync = ["sync", library, "--prefix", elsewhere, "--min-age", "0", "--db", db]
        let stopped = try await CLI.run(sync, environment: wrong)
        #expect(stopped.status == 3, "\(stopped.stderr)")
        // Each object is where it was: the tracks are uploaded, their copies not made yet.
        let status = try await CLI.run(["status", library, "--db", db], environment: env)
        #expect(status.stdout.contains("3 tracks: 3 uploaded"), "\(status.stdout)")
        #expect(status.stdout.contains("one.flac (its copy to \(elsewhere)/one.flac is not made yet, resumes on the next run)"), "\(status.stdout)")
        let again = try await CLI.run(push, environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("push: 0 uploaded (0 bytes), 0 copied, 3 skipped (unchanged), 0 failed in "), "\(again.stderr)")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        #expect(history.stdout.split(separator: "\n").count == 4, "\(history.stdout)")  // the header and the first push
        // The same sync with the right secret makes the copies: nothing is sent again.
        let resumed = try await CLI.run(sync, environment: env)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 3 moved (copied in the bucket, 0 bytes sent)"), "\(resumed.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(elsewhere)/two.flac"]) == "track two")
    }

    @Test("a copy to another prefix onto a stranger's object of the same size: a conflict (exit 1), the object kept")
    func copyOntoStrangersObject() async throws {
        let folder = try TemporaryFolder()
        let (library, db, env) = try Self.library(folder, ["one"])
        let first = Self.prefix("own"), second = Self.prefix("stranger")
        let sync = ["sync", library, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync + ["--prefix", first], environment: env).status == 0)
        // Another client's object at the key the copy goes to: "track one" has 9 bytes, so has this.
        _ = try await TrackIdentityCommandTests.boto3(["put", "\(second)/one.flac", "not yours"])
        let run = try await CLI.run(sync + ["--prefix", second], environment: env)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("\(second)/one.flac' already holds an object"), "\(run.stderr)")
        #expect(!run.stderr.contains("does not match"), "\(run.stderr)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(second)/one.flac"]) == "not yours")
    }

    @Test("a copy refused by another client's object of its size stays refused when retried: the track is never recorded there")
    func refusedCopyRetried() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        // 9 MiB: uploaded in parts, so the copy's ETag cannot be checked against the source's.
        let size = 9 << 20
        try Data(repeating: 0x41, count: size).write(to: URL(fileURLWithPath: library + "/big.flac"))
        let strangers = folder.path + "/stranger.bin"
        try Data(repeating: 0x42, count: size).write(to: URL(fileURLWithPath: strangers))
        let db = folder.path + "/db.sqlite"
        let first = Self.prefix("mine"), second = Self.prefix("theirs")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync + ["--prefix", first], environment: env).status == 0)
        try await PullFixtures.put([("\(second)/big.flac", .file(strangers))])
        let refused = try await CLI.run(sync + ["--prefix", second], environment: env)
        #expect(refused.status == 1, "\(refused.stderr)")
        let retried = try await CLI.run(["retry", "--all", "--db", db], environment: env)
        #expect(retried.status == 1, "\(retried.stdout)\(retried.stderr)")
        #expect(retried.stderr.contains("\(second)/big.flac' already holds an object"), "\(retried.stderr)")
        let status = try await CLI.run(["status", library, "--json", "--db", db], environment: env)
        #expect(status.stdout.contains("\"key\" : \"\(first)/big.flac\""), "\(status.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(second)/big.flac"]) == String(repeating: "B", count: size))
    }

    @Test("a file that moved and changed is uploaded to its new key as usual")
    func movedAndChanged() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let old = folder.write("lib/song.m4a", "first master")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("changed")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        try FileManager.default.moveItem(atPath: old, toPath: library + "/song (remaster).m4a")
        let handle = try #require(FileHandle(forWritingAtPath: library + "/song (remaster).m4a"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(", remastered".utf8))
        try handle.close()

        let log = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(sync, environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.hasPrefix("sync: 1 uploaded (24 bytes), 0 failed"), "\(run.stdout)")
        let puts = try Self.requests(log).filter { $0.method == "PUT" }
        #expect(puts.count == 1)
        #expect(puts.first?.length == 24)
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/song (remaster).m4a"]) == "first master, remastered")
    }

    @Test("a move onto a key a third track holds: a conflict (exit 1), nothing overwritten, nothing moved")
    func moveOntoAnotherTracksKey() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = folder.write("lib/a.m4a", "track a")
        let third = folder.write("third.m4a", "a third track, pushed by hand")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("onto")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        let pushed = try await CLI.run(["push", third, "--key", "\(prefix)/b.m4a", "--db", db], environment: env)
        #expect(pushed.status == 0, "stderr: \(pushed.stderr)")

        try FileManager.default.moveItem(atPath: library + "/a.m4a", toPath: library + "/b.m4a")
        let run = try await CLI.run(sync, environment: env)
        #expect(run.status == 1)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(run.stderr)")
        #expect(
            run.stderr.contains("\(library)/b.m4a: moved from \(library)/a.m4a: the key '\(prefix)/b.m4a' holds \(third) uploaded 20"),
            "stderr: \(run.stderr)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/b.m4a"]) == "a third track, pushed by hand")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/a.m4a"]) == "track a")
        let store = try Store(path: db)
        #expect(try store.track(path: library + "/a.m4a")?.key == "\(prefix)/a.m4a")
        #expect(try store.track(path: library + "/b.m4a") == nil)
        #expect(try store.track(path: third)?.key == "\(prefix)/b.m4a")
    }

    @Test("--key that another track holds: one clear line, exit 1, nothing overwritten")
    func keyHeldByAnotherTrack() async throws {
        let folder = try TemporaryFolder()
        let first = folder.write("first.m4a", "the first track")
        let second = folder.write("second.m4a", "the second track")
        let db = folder.path + "/db.sqlite"
        let key = Self.prefix("key") + "/track.m4a"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", first, "--key", key, "--db", db], environment: env).status == 0)
        let run = try await CLI.run(["push", second, "--key", key, "--db", db], environment: env)
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.split(separator: "\n").count == 1, "stderr: \(run.stderr)")
        #expect(run.stderr.hasPrefix("r2up: \(second): the key '\(key)' holds \(first) uploaded 20"), "stderr: \(run.stderr)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", key]) == "the first track")
    }

    @Test("--no-clobber onto another track's key holding the same bytes: refused, the key stays the other track's")
    func noClobberSameBytes() async throws {
        let folder = try TemporaryFolder()
        for sub in ["a", "b"] { try FileManager.default.createDirectory(atPath: folder.path + "/" + sub, withIntermediateDirectories: true) }
        let first = folder.write("a/song.m4a", "the same bytes in two places")
        let second = folder.write("b/song.m4a", "the same bytes in two places")
        let db = folder.path + "/db.sqlite"
        let key = Self.prefix("sameb") + "/song.m4a"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", first, "--key", key, "--db", db], environment: env).status == 0)
        // The object there is byte for byte this file, but it is the first track's upload: not taken for this one's.
        let run = try await CLI.run(["push", second, "--key", key, "--no-clobber", "--db", db], environment: env)
        #expect(run.status == 1, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(run.stderr.contains("already holds an object"), "\(run.stderr)")
        let url = try await CLI.run(["copy-url", first, "--db", db], environment: env)
        #expect(url.status == 0, "stderr: \(url.stderr)")
        let status = try await CLI.run(["status", folder.path + "/a", "--json", "--db", db], environment: env)
        #expect(status.stdout.contains("\"uploadState\" : \"uploaded\""), "\(status.stdout)")
        let other = try await CLI.run(["status", folder.path + "/b", "--json", "--db", db], environment: env)
        #expect(!other.stdout.contains("\"uploadState\" : \"uploaded\""), "\(other.stdout)")
    }

    @Test("push DIR: a renamed file is a copy too (found by its digest: push records no inode), its URL printed")
    func pushFolderMove() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/album"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        _ = folder.write("album/a.m4a", "pushed once")
        _ = folder.write("album/b.m4a", "stays")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("push")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let push = ["push", album + "/", "--prefix", prefix, "--db", db]
        #expect(try await CLI.run(push, environment: env).status == 0)
        try FileManager.default.moveItem(atPath: album + "/a.m4a", toPath: album + "/a (renamed).m4a")

        let log = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(push, environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.hasSuffix("/\(prefix)/a%20%28renamed%29.m4a\n"), "\(run.stdout)")
        let requests = try Self.requests(log)
        #expect(requests.filter { $0.method == "PUT" }.count == 1)
        #expect(requests.reduce(0) { $0 + $1.length } == 0)
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/a (renamed).m4a"]) == "pushed once")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        #expect(history.stdout.contains("(copy of \(prefix)/a.m4a)"), "\(history.stdout)")

        // A move onto a key a third track holds: one line, exit 1, nothing overwritten.
        let third = folder.write("third.m4a", "a third track")
        #expect(try await CLI.run(["push", third, "--key", "\(prefix)/c.m4a", "--db", db], environment: env).status == 0)
        try FileManager.default.moveItem(atPath: album + "/b.m4a", toPath: album + "/c.m4a")
        let refused = try await CLI.run(push, environment: env)
        #expect(refused.status == 1)
        // The refusal, then the folder push's summary line (issue 29 item 5).
        #expect(refused.stderr.split(separator: "\n").count == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("\npush: 0 uploaded (0 bytes), 0 copied, 1 skipped (unchanged), 1 failed in "), "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix("r2up: \(album)/c.m4a: moved from \(album)/b.m4a: the key '\(prefix)/c.m4a' holds \(third) uploaded 20"),
            "\(refused.stderr)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/c.m4a"]) == "a third track")
    }

    @Test("push DIR --prefix OTHER: each uploaded track goes to its key under OTHER as a server-side copy, 0 payload bytes")
    func pushFolderUnderAnotherPrefix() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/album"
        try FileManager.default.createDirectory(atPath: album + "/Disc 1", withIntermediateDirectories: true)
        _ = folder.write("album/Disc 1/a.m4a", "track a")
        _ = folder.write("album/b.m4a", "track b")
        let db = folder.path + "/db.sqlite"
        let first = Self.prefix("first")
        let second = Self.prefix("second")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", album + "/", "--prefix", first, "--db", db], environment: env).status == 0)

        let log = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(["push", album + "/", "--prefix", second, "--db", db], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.split(separator: "\n").count == 2, "\(run.stdout)")
        let requests = try Self.requests(log)
        #expect(requests.filter { $0.method == "PUT" }.count == 2, "\(requests.map(\.target))")
        #expect(requests.reduce(0) { $0 + $1.length } == 0)
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(second)/Disc 1/a.m4a"]) == "track a")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(second)/b.m4a"]) == "track b")
        // The first copies stay where they are (their URLs may be shared); the track is now at its new key.
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(first)/b.m4a"]) == "track b")
        let url = try await CLI.run(["copy-url", album + "/b.m4a", "--db", db], environment: env)
        #expect(url.stdout.hasSuffix("/\(second)/b.m4a\n"), "\(url.stdout)")
        // The same push again has nothing to do.
        let again = try await CLI.run(["push", album + "/", "--prefix", second, "--db", db], environment: env)
        #expect(again.status == 0)
        #expect(again.stderr.contains("nothing to upload"), "\(again.stderr)")
    }

    @Test("a copy is a job: refused by the server it fails (exit 1) and shows in queue as a copy; retry makes it, 0 bytes sent")
    func copyIsAJob() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = folder.write("lib/old name.m4a", "a track that will move")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("job")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db, "--retries", "0"]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        try FileManager.default.moveItem(atPath: library + "/old name.m4a", toPath: library + "/new name.m4a")

        // Every PUT (the copy is one) answered 500: the copy job fails, retryably.
        let server = try CLI.serverEnvironment()
        let failing = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "PUT",
             "--error-rate", "1.0", "--error-statuses", "500", "--max-seconds", "120"])
        defer { failing.stop() }
        env["R2UP_ENDPOINT"] = failing.endpoint
        let refused = try await CLI.run(sync, environment: env)
        #expect(refused.status == 1, "stdout: \(refused.stdout) stderr: \(refused.stderr)")
        #expect(refused.stderr.contains("\(library)/new name.m4a"), "\(refused.stderr)")
        let queue = try await CLI.run(["queue", "--json", "--db", db], environment: env)
        #expect(queue.stdout.contains("\"copyOf\" : \"\(prefix)/old name.m4a\""), "\(queue.stdout)")
        let plain = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(plain.stdout.contains("\(prefix)/new name.m4a (copy of \(prefix)/old name.m4a) ("), "\(plain.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/new name.m4a"]) == "MISSING")

        let log = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let retried = try await CLI.run(["retry", "--all", "--db", db], environment: env)
        #expect(retried.status == 0, "stderr: \(retried.stderr)")
        #expect(retried.stdout.hasSuffix("/\(prefix)/new%20name.m4a\n"), "\(retried.stdout)")
        #expect(try Self.requests(log).reduce(0) { $0 + $1.length } == 0)
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/new name.m4a"]) == "a track that will move")
    }

    @Test("kill -9 while a copy's reply is on its way: the queue shows it interrupted, the next sync records it, nothing sent twice")
    func killedMidCopy() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = folder.write("lib/before.m4a", "a track copied when r2up dies")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("killcopy")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        try FileManager.default.moveItem(atPath: library + "/before.m4a", toPath: library + "/after.m4a")

        // The server makes the copy; the relay holds its reply: r2up dies not knowing it succeeded.
        let (stalling, victim) = try await Self.syncWithRepliesHeld(sync, environment: env, log: folder.path + "/stall.jsonl", until: 1)
        defer { stalling.stop() }
        victim.kill()
        #expect(try await victim.wait() == SIGKILL)
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/after.m4a"]) == "a track copied when r2up dies")

        // At once: not uploading (its owner is gone), but interrupted, as a copy.
        let queue = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(queue.status == 0, "stderr: \(queue.stderr)")
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 1 interrupted"), "\(queue.stdout)")
        #expect(queue.stdout.contains("\(prefix)/after.m4a (copy of \(prefix)/before.m4a)"), "\(queue.stdout)")

        // The next sync finds the object the killed run made: recorded, no byte of the file sent.
        let relayLog = folder.path + "/relay.jsonl"
        let relay = try await Self.relay(log: relayLog)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let again = try await CLI.run(sync, environment: env)
        #expect(again.status == 0, "stdout: \(again.stdout) stderr: \(again.stderr)")
        #expect(try Self.requests(relayLog).filter { $0.method == "PUT" || $0.method == "POST" }.reduce(0) { $0 + $1.length } == 0)
        let history = try await CLI.run(["history", "--db", db], environment: env)
        let rows = history.stdout.split(separator: "\n").filter { $0.contains("\(prefix)/after.m4a") }
        #expect(rows.count == 1, "\(history.stdout)")
        #expect(rows.first?.hasSuffix("(copy of \(prefix)/before.m4a)") == true, "\(history.stdout)")
        let after = try await CLI.run(["queue", "--db", db], environment: env)
        #expect(after.stdout.hasPrefix("0 queued · 0 uploading · 0 failed"), "\(after.stdout)")
        let third = try await CLI.run(sync, environment: env)
        #expect(third.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 1 unchanged"), "\(third.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/after.m4a"]) == "a track copied when r2up dies")
    }

    @Test("Ctrl-C while copies' replies are on their way: the next sync records the copies the server made, none failed")
    func interruptedMidCopies() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        for number in 1...6 { _ = folder.write("lib/take \(number).m4a", "take \(number) " + String(repeating: "♪", count: number * 11)) }
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("intcopies")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db, "--concurrency", "2"]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        for number in 1...6 {
            try FileManager.default.moveItem(atPath: library + "/take \(number).m4a", toPath: library + "/take \(number) (final).m4a")
        }
        let (stalling, victim) = try await Self.syncWithRepliesHeld(sync, environment: env, log: folder.path + "/stall.jsonl", until: 2)
        defer { stalling.stop() }
        victim.interrupt()
        #expect(try await victim.wait() == 130)

        let again = try await CLI.run(sync, environment: env)
        #expect(again.status == 0, "stdout: \(again.stdout) stderr: \(again.stderr)")
        #expect(again.stdout.contains("0 failed"), "\(again.stdout)")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        let copies = history.stdout.split(separator: "\n").filter { $0.contains("(final).m4a") }
        #expect(copies.count == 6, "\(history.stdout)")
        for number in 1...6 {
            #expect(
                try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/take \(number) (final).m4a"])
                    == "take \(number) " + String(repeating: "♪", count: number * 11))
        }
    }

    @Test("a moved track whose old object was deleted behind r2up's back is uploaded instead of copied")
    func sourceGone() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = folder.write("lib/a.m4a", "the only copy is local now")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("gone")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        let delete = """
            import boto3, os, sys
            e = os.environ
            boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                         aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1").delete_object(
                Bucket=e["R2UP_TEST_BUCKET"], Key=sys.argv[1])
            """
        let deleted = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", delete, "\(prefix)/a.m4a"], environment: ProcessInfo.processInfo.environment)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        try FileManager.default.moveItem(atPath: library + "/a.m4a", toPath: library + "/b.m4a")
        let run = try await CLI.run(sync, environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.hasPrefix("sync: 1 uploaded (26 bytes), 0 failed"), "\(run.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(prefix)/b.m4a"]) == "the only copy is local now")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        #expect(!history.stdout.contains("(copy of"), "\(history.stdout)")
    }
}
