import Foundation
import Testing
import R2UpModel
@testable import R2UpStore

/// Issue 29, items 1 and 2, as a user meets them: push, sync and watch take files through one
/// intake, so a pulled copy is not an upload, a bucket is part of a track's identity, and a
/// prefix change is a server-side copy whichever command makes it. Requests are counted by
/// tools/faultproxy.py in front of SeaweedFS; the bucket is read with boto3.
@Suite("r2up push and sync: one intake (pulled copies, buckets, prefix changes)")
struct IntakeCommandTests {
    static func prefix(_ label: String) -> String { "intake/\(label)-\(UInt32.random(in: 0...UInt32.max))" }

    /// `status DIR --json`'s upload state of each track, by path.
    static func uploadStates(_ folder: String, db: String, environment: [String: String]) async throws -> [String: String] {
        let run = try await CLI.run(["status", folder, "--by", "folder", "--json", "--db", db], environment: environment)
        guard run.status == 0 else { throw HarnessError("status failed: \(run.stderr)") }
        var states: [String: String] = [:]
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                if let path = object["path"] as? String, let state = object["uploadState"] as? String { states[path] = state }
                for child in object.values { walk(child) }
            } else if let array = value as? [Any] {
                for child in array { walk(child) }
            }
        }
        walk(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)))
        return states
    }

    @Test("pull PREFIX other/: an edit in the library is synced (the pulled copy holds no key), and pull refreshes the copy")
    func pulledCopyIsNoUpload() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let song = folder.write("library/song.m4a", "version 1")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("pulled")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let first = try await CLI.run(["push", library + "/", "--prefix", prefix, "--db", db], environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let other = folder.path + "/other"
        let pulled = try await CLI.run(["pull", prefix + "/", other, "--db", db], environment: env)
        #expect(pulled.status == 0, "stderr: \(pulled.stderr)")
        let copy = other + "/song.m4a"
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "version 1")

        try Data("version 2, edited".utf8).write(to: URL(fileURLWithPath: song))
        let sync = try await CLI.run(["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db], environment: env)
        #expect(sync.status == 0, "stdout: \(sync.stdout) stderr: \(sync.stderr)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", prefix + "/song.m4a"]) == "version 2, edited")
        #expect(try await Self.uploadStates(library, db: db, environment: env)[song] == "uploaded")

        // The pulled copy was not touched: pull brings it up to date.
        let again = try await CLI.run(["pull", prefix + "/", other, "--db", db], environment: env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == "version 2, edited")
    }

    @Test("a refused push (nothing sent) leaves the track's state: uploaded at its own key, the next sync has nothing to do")
    func refusedPushKeepsState() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let cover = folder.write("library/cover.jpg", "the cover")
        let third = folder.write("third.jpg", "another track")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("refused")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", library + "/", "--prefix", prefix, "--db", db], environment: env).status == 0)
        #expect(try await CLI.run(["push", third, "--key", prefix + "/elsewhere.jpg", "--db", db], environment: env).status == 0)

        let refused = try await CLI.run(["push", cover, "--key", prefix + "/elsewhere.jpg", "--db", db], environment: env)
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("r2up: \(cover): the key '\(prefix)/elsewhere.jpg' holds \(third) uploaded 20"), "\(refused.stderr)")
        #expect(try Store(path: db).track(path: cover)?.uploadState == .uploaded)
        #expect(try await Self.uploadStates(library, db: db, environment: env)[cover] == "uploaded")

        let sync = try await CLI.run(["sync", library, "--prefix", prefix, "--min-age", "0", "--json", "--db", db], environment: env)
        #expect(sync.status == 0, "stdout: \(sync.stdout) stderr: \(sync.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(summary["uploaded"] as? Int == 0 && summary["unchanged"] as? Int == 1, "\(sync.stdout)")
    }

    @Test("push DIR uploads a file that was uploaded to another bucket; status for this bucket does not show it uploaded")
    func anotherBucket() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let song = folder.write("library/song.m4a", "in two buckets")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("buckets")
        let seaweed = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        // Another bucket (on moto: SeaweedFS's data volumes are few), named apart from the first.
        var moto = try CoreServer.named(CoreServer.moto)
        moto.bucket = "r2up-intake-other"
        let made = try await ProcessRunner.run(
            "/usr/bin/env",
            ["python3", "-c", """
                import boto3, sys
                s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="motokey",
                                  aws_secret_access_key="motosecret", region_name="us-east-1")
                if sys.argv[2] not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
                    s3.create_bucket(Bucket=sys.argv[2])
                """, moto.endpoint, moto.bucket],
            environment: ProcessInfo.processInfo.environment)
        #expect(made.status == 0, "\(made.stderr)")
        let motoEnv = moto.environment(home: folder.path)
        #expect(try await CLI.run(["push", library + "/", "--prefix", prefix, "--db", db], environment: seaweed).status == 0)
        #expect(try await Self.uploadStates(library, db: db, environment: seaweed)[song] == "uploaded")
        #expect(try await Self.uploadStates(library, db: db, environment: motoEnv)[song] == "none")

        let other = try await CLI.run(["push", library + "/", "--prefix", prefix, "--db", db], environment: motoEnv)
        #expect(other.status == 0, "stderr: \(other.stderr)")
        #expect(!other.stderr.contains("nothing to upload"), "\(other.stderr)")
        #expect(other.stdout.split(separator: "\n").count == 1, "\(other.stdout)")
        let stored = try await moto.stored(under: prefix + "/")
        #expect(stored[prefix + "/song.m4a"]?.hasPrefix("\("in two buckets".utf8.count):") == true, "\(stored)")
        #expect(try await Self.uploadStates(library, db: db, environment: motoEnv)[song] == "uploaded")
    }

    @Test("sync DIR --prefix b/ after push DIR --prefix a/: server-side copies, 0 payload bytes; --dry-run says copy")
    func syncAfterPrefixChange() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/album"
        try FileManager.default.createDirectory(atPath: album + "/Disc 2", withIntermediateDirectories: true)
        var tracks: [String: String] = [:]
        for index in 1...20 {
            let name = index > 15 ? "Disc 2/\(index).m4a" : "\(index).m4a"
            tracks[name] = "track \(index) " + String(repeating: "x", count: index * 100)
            _ = folder.write("album/" + name, tracks[name] ?? "")
        }
        let db = folder.path + "/db.sqlite"
        let first = Self.prefix("a")
        let second = Self.prefix("b")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", album + "/", "--prefix", first, "--db", db], environment: env).status == 0)

        let sync = ["sync", album, "--prefix", second, "--min-age", "0", "--db", db]
        let dry = try await CLI.run(sync + ["--dry-run"], environment: env)
        #expect(dry.status == 0, "stderr: \(dry.stderr)")
        let lines = dry.stdout.split(separator: "\n").filter { $0.hasPrefix("would ") }
        #expect(lines.count == 20 && lines.allSatisfy { $0.hasPrefix("would copy \(first)/") }, "\(dry.stdout)")
        #expect(!dry.stdout.contains(", changed)"), "\(dry.stdout)")

        let log = folder.path + "/relay.jsonl"
        let relay = try await TrackMoveCommandTests.relay(log: log)
        defer { relay.stop() }
        env["R2UP_ENDPOINT"] = relay.endpoint
        let run = try await CLI.run(sync + ["--json"], environment: env)
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(summary["copied"] as? Int == 20 && summary["uploaded"] as? Int == 0, "\(run.stdout)")
        let requests = try TrackMoveCommandTests.requests(log)
        #expect(requests.filter { $0.method == "PUT" }.count == 20, "\(requests.map(\.target))")
        #expect(requests.reduce(0) { $0 + $1.length } == 0)
        let stored = try await TrackIdentityCommandTests.boto3(["get", "\(second)/Disc 2/17.m4a"])
        #expect(stored == tracks["Disc 2/17.m4a"])
        // The old objects stay (their URLs may be shared); the same sync again has nothing to do.
        #expect(try await TrackIdentityCommandTests.boto3(["get", "\(first)/1.m4a"]) == tracks["1.m4a"])
        let again = try await CLI.run(sync + ["--json"], environment: env)
        let next = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(next["unchanged"] as? Int == 20 && next["copied"] as? Int == 0, "\(again.stdout)")
    }

    @Test("push DIR skips the temporary names sync and watch skip (*.part, *.crdownload, *.tmp, …); status DIR does not list them")
    func pushSkipsTemporaryNames() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let song = folder.write("library/song.m4a", "a whole song")
        for name in ["song2.m4a.part", "song3.m4a.crdownload", "~lock.tmp", "notes.txt~"] { _ = folder.write("library/" + name, "partial") }
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("temporary")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let pending = try await Self.uploadStates(library, db: db, environment: env)
        #expect(pending.keys.sorted() == [song], "\(pending)")

        let push = try await CLI.run(["push", library + "/", "--prefix", prefix, "--db", db], environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        #expect(push.stdout.split(separator: "\n").count == 1, "\(push.stdout)")
        #expect(try await TrackIdentityCommandTests.boto3(["get", prefix + "/song2.m4a.part"]) == "MISSING")
        #expect(try await TrackIdentityCommandTests.boto3(["get", prefix + "/song.m4a"]) == "a whole song")
        #expect(try await Self.uploadStates(library, db: db, environment: env) == [song: "uploaded"])
    }
}
