import Foundation
import Testing

/// `r2up fetch` brings offloaded tracks back, against the real server.
@Suite("r2up fetch", .serialized)
struct FetchCommandTests {
    @Test("a folder's offloaded tracks come back byte for byte with their mtimes, show downloaded, and sync sends nothing")
    func fetchFolder() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["a/01.m4a", "a/02.m4a", "b/03.m4a"])
        let mtimes = try Dictionary(uniqueKeysWithValues: ["a/01.m4a", "a/02.m4a", "b/03.m4a"].map { ($0, try StatusFiles.mtimeNs(lib.dir + "/" + $0)) })
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        // The album folder itself removed too: fetch makes it again.
        try FileManager.default.removeItem(atPath: lib.dir + "/b")

        let fetch = try await CLI.run(lib.r2up(["fetch", lib.dir + "/a", lib.dir + "/b/03.m4a"]), environment: lib.env)
        #expect(fetch.status == 0, "stderr: \(fetch.stderr)")
        #expect(fetch.stdout.split(separator: "\n").map(String.init).sorted() == ["a/01.m4a", "a/02.m4a", "b/03.m4a"].map { lib.dir + "/" + $0 })
        #expect(fetch.stderr == "Fetched 3 files (24 bytes).\n")
        for (name, mtime) in mtimes {
            #expect(PullFixtures.text(lib.dir + "/" + name) == name)
            #expect(try StatusFiles.mtimeNs(lib.dir + "/" + name) == mtime, "\(name) has its mtime of upload back")
        }
        #expect(try PullFixtures.files(under: lib.dir) == ["a/01.m4a", "a/02.m4a", "b/03.m4a"], "no temporary file left")
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(Set(try PullFixtures.icons(status.stdout).values) == ["downloaded"])

        let sync = try await CLI.run(lib.r2up(["sync", lib.dir, "--prefix", lib.prefix, "--min-age", "0", "--json"]), environment: lib.env)
        #expect(sync.status == 0, "stderr: \(sync.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(sync.stdout.utf8)) as? [String: Any])
        #expect(summary["uploaded"] as? Int == 0, "\(sync.stdout)")

        // Fetched tracks may be offloaded again; a fetch of tracks on disk does nothing.
        let again = try await CLI.run(lib.r2up(["offload", lib.dir + "/a"]), environment: lib.env)
        #expect(again.stderr == "Offloaded 2 files (16 bytes freed).\n", "\(again.stderr)")
        let onDisk = try await CLI.run(lib.r2up(["fetch", lib.dir + "/b"]), environment: lib.env)
        #expect(onDisk.stderr == "Fetched 0 files (0 bytes); 1 already on disk.\n")
    }

    @Test("an object deleted or replaced since the upload is not fetched: one line each, exit 1, nothing at the track's path")
    func faults() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["gone.m4a", "other.m4a", "fine.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0]); s3.put_object(Bucket=b, Key=a[1], Body=b'XXXXXXXXX')", [lib.prefix + "gone.m4a", lib.prefix + "other.m4a"])
        let run = try await CLI.run(lib.r2up(["fetch", lib.dir]), environment: lib.env)
        #expect(run.status == 1, "stderr: \(run.stderr)")
        let lines = Set(run.stderr.split(separator: "\n").map(String.init))
        #expect(lines == [
            "r2up: \(lib.dir)/gone.m4a: its object '\(lib.prefix)gone.m4a' is no longer in bucket '\(lib.env["R2UP_BUCKET"] ?? "")'; nothing fetched",
            "r2up: \(lib.dir)/other.m4a: its object '\(lib.prefix)other.m4a' was replaced since its upload (the ETag is not the recorded one); nothing fetched",
            "Fetched 1 file (8 bytes); 2 failed.",
        ])
        #expect(try PullFixtures.files(under: lib.dir) == ["fine.m4a"])
        // A server that is down stops the run: one line, exit 3 (as push and offload), still nothing at the path.
        var dead = lib.env
        dead["R2UP_ENDPOINT"] = "http://127.0.0.1:9"
        let down = try await CLI.run(lib.r2up(["fetch", lib.dir + "/gone.m4a"]), environment: dead)
        #expect(down.status == 3, "stderr: \(down.stderr)")
        #expect(down.stderr.hasPrefix("r2up: the endpoint refused the connection"), "\(down.stderr)")
        #expect(down.stderr.split(separator: "\n").count == 2, "the stop, then the summary: \(down.stderr)")
        #expect(try PullFixtures.files(under: lib.dir) == ["fine.m4a"])
        let unknown = try await CLI.run(lib.r2up(["fetch", folder.path + "/nowhere"]), environment: lib.env)
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "r2up: \(folder.path)/nowhere: r2up knows no track with a cloud copy there; nothing fetched\n")
    }

    @Test("SIGKILL mid-fetch: nothing at the track's path, the track still cloud only; the next fetch resumes, bytes match")
    func killAndResume() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try await PullFixtures.randomFile(dir + "/big.flac", bytes: 48 << 20)
        let original = try await PullFixtures.sha256(dir + "/big.flac")
        let prefix = PullFixtures.scratchPrefix("fetch-kill")
        let lib = OffloadFixtures.Library(dir: dir, prefix: prefix, db: folder.path + "/db.sqlite", env: try PullFixtures.env(folder))
        let push = try await CLI.run(lib.r2up(["push", dir + "/", "--prefix", prefix]), environment: lib.env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        let offload = try await CLI.run(lib.r2up(["offload", dir]), environment: lib.env)
        #expect(offload.stderr == "Offloaded 1 file (48 MB freed).\n")

        let record = dir + "/.big.flac.r2up-resume"
        // 16 MB/s: three seconds for the whole object, time enough to stop it part-way.
        let victim = try PullProcess(lib.r2up(["fetch", dir, "--bwlimit", "16M", "--concurrency", "2"]), environment: lib.env)
        var finished = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            finished = ResumeFile.finishedParts(record).count
            if finished >= 2 || !victim.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        victim.kill()
        #expect(try await victim.wait() == SIGKILL, "the fetch ended before it was killed (\(finished) parts recorded)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/big.flac"), "no half-written file at the track's path")
        let status = try await CLI.run(lib.r2up(["status", dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(status.stdout) == [dir + "/big.flac": "cloudOnly"])

        let rerun = try await CLI.run(lib.r2up(["fetch", dir, "--json"]), environment: lib.env)
        #expect(rerun.status == 0, "stderr: \(rerun.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(rerun.stdout.utf8)) as? [[String: Any]])
        let resumed = try #require(rows.first?["resumedBytes"] as? Int)
        #expect(resumed >= 2 * (8 << 20), "resumed \(resumed) bytes")
        #expect(try await PullFixtures.sha256(dir + "/big.flac") == original)
        #expect(try PullFixtures.files(under: dir) == ["big.flac"], "temporary file and record removed")
        let after = try await CLI.run(lib.r2up(["status", dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(after.stdout) == [dir + "/big.flac": "downloaded"])
    }
}
