import Foundation
import Testing

/// `sync` and `watch` with `--offload-after DURATION`: the offload as policy, after the run.
@Suite("r2up sync and watch --offload-after")
struct OffloadPolicyTests {
    @Test("sync --offload-after keeps what is younger, frees what is old enough (checked, cloud only); its JSON carries the offload")
    func sync() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/lib"
        try StatusFiles.make(dir, ["a/01.m4a", "a/02.m4a"])
        let prefix = PullFixtures.scratchPrefix("offload-after")
        let lib = OffloadFixtures.Library(dir: dir, prefix: prefix, db: folder.path + "/db.sqlite", env: try PullFixtures.env(folder))
        let sync = ["sync", dir, "--prefix", prefix, "--min-age", "0"]

        let young = try await CLI.run(lib.r2up(sync + ["--offload-after", "30d"]), environment: lib.env)
        #expect(young.status == 0, "stderr: \(young.stderr)")
        #expect(young.stderr == "Offloaded 0 files (0 bytes freed); kept 2: 2 too recent.\n")
        #expect(try PullFixtures.files(under: dir) == ["a/01.m4a", "a/02.m4a"])

        let now = try await CLI.run(lib.r2up(sync + ["--offload-after", "0s", "--json"]), environment: lib.env)
        #expect(now.status == 0, "stderr: \(now.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(now.stdout.utf8)) as? [String: Any])
        #expect(object["unchanged"] as? Int == 2)
        let offload = try #require(object["offload"] as? [String: Any])
        #expect(offload["freedFiles"] as? Int == 2)
        #expect(offload["headRequests"] as? Int == 2)
        #expect(try PullFixtures.files(under: dir).isEmpty)
        let status = try await CLI.run(lib.r2up(["status", dir, "--json"]), environment: lib.env)
        #expect(Set(try PullFixtures.icons(status.stdout).values) == ["cloudOnly"])

        // A later sync sees the offloaded tracks as cloud only: nothing uploaded, nothing deleted.
        let again = try await CLI.run(lib.r2up(sync + ["--offload-after", "0s", "--json"]), environment: lib.env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(second["uploaded"] as? Int == 0)
        #expect((second["offload"] as? [String: Any])?["alreadyCloudOnly"] as? Int == 2)

        let bad = try await CLI.run(lib.r2up(sync + ["--offload-after", "-1d"]), environment: lib.env)
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("r2up: --offload-after '-1d' is not a duration of 0 or more"))
    }

    @Test("watch --offload-after 0s: a file that lands is uploaded, then offloaded after the next full pass")
    func watch() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let prefix = PullFixtures.scratchPrefix("offload-watch")
        let db = folder.path + "/db.sqlite"
        let env = try PullFixtures.env(folder)
        let watcher = try PullProcess(
            ["watch", dir, "--prefix", prefix, "--min-age", "0", "--rescan", "1s", "--offload-after", "0s", "--db", db], environment: env)
        defer { watcher.kill() }
        try await Task.sleep(for: .milliseconds(500))
        try Data("landed".utf8).write(to: URL(fileURLWithPath: dir + "/new.m4a"))
        let deadline = ContinuousClock.now + .seconds(30)
        var uploaded = false
        while ContinuousClock.now < deadline {
            if try await OffloadFixtures.objectExists(prefix + "new.m4a") { uploaded = true }
            if uploaded && !FileManager.default.fileExists(atPath: dir + "/new.m4a") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(uploaded)
        #expect(!FileManager.default.fileExists(atPath: dir + "/new.m4a"), "offloaded after a full pass")
        watcher.interrupt()
        #expect(try await watcher.wait() == 0)
        let status = try await CLI.run(["status", dir, "--json", "--db", db], environment: env)
        #expect(try PullFixtures.icons(status.stdout) == [dir + "/new.m4a": "cloudOnly"])
    }
}

extension OffloadFixtures {
    static func objectExists(_ key: String) async throws -> Bool {
        let script = """
            import boto3, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            r = s3.list_objects_v2(Bucket=e["R2UP_TEST_BUCKET"], Prefix=sys.argv[1])
            sys.stdout.write(str(r.get("KeyCount", 0)))
            """
        let run = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", script, key], environment: ProcessInfo.processInfo.environment)
        return run.stdout == "1"
    }
}
