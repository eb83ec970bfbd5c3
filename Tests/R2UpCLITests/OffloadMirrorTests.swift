import Foundation
import Testing

/// Offloaded tracks beside the commands that treat a gone file as deleted: a mirror must keep
/// an offloaded track's object (its only copy), and naming an offloaded file again is no error.
@Suite("r2up offload and mirrors")
struct OffloadMirrorTests {
    @Test("sync --delete --force keeps an offloaded track's object and deletes a file deleted by hand; after a fetch the track is mirrored again")
    func syncDeleteKeepsOffloaded() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["a/01.m4a", "a/02.m4a", "a/03.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir + "/a/01.m4a"]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        try FileManager.default.removeItem(atPath: lib.dir + "/a/02.m4a")
        let sync = ["sync", lib.dir, "--prefix", lib.prefix, "--min-age", "0"]

        let counted = try await CLI.run(lib.r2up(sync + ["--json"]), environment: lib.env)
        #expect(counted.status == 0, "stderr: \(counted.stderr)")
        #expect(try Self.object(counted.stdout)["stale"] as? Int == 1, "only the file deleted by hand is stale")

        let mirror = try await CLI.run(lib.r2up(sync + ["--delete", "--force", "--json"]), environment: lib.env)
        #expect(mirror.status == 0, "stderr: \(mirror.stderr)")
        let deletions = try #require(try Self.object(mirror.stdout)["deletions"] as? [[String: Any]])
        #expect(deletions.compactMap { $0["key"] as? String } == [lib.prefix + "a/02.m4a"])
        #expect(try await OffloadFixtures.objectExists(lib.prefix + "a/01.m4a"), "the offloaded track's only copy")
        #expect(try await !OffloadFixtures.objectExists(lib.prefix + "a/02.m4a"))
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(status.stdout)[lib.dir + "/a/01.m4a"] == "cloudOnly")

        // Fetched back, then deleted by hand: an ordinary gone file, mirrored as such.
        let fetch = try await CLI.run(lib.r2up(["fetch", lib.dir + "/a/01.m4a"]), environment: lib.env)
        #expect(fetch.status == 0, "stderr: \(fetch.stderr)")
        try FileManager.default.removeItem(atPath: lib.dir + "/a/01.m4a")
        let again = try await CLI.run(lib.r2up(sync + ["--delete", "--force", "--json"]), environment: lib.env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        let second = try #require(try Self.object(again.stdout)["deletions"] as? [[String: Any]])
        #expect(second.compactMap { $0["key"] as? String } == [lib.prefix + "a/01.m4a"])
    }

    @Test("sync --delete of a folder whose every track is offloaded (empty now) is no unmounted disk: exit 0, nothing deleted")
    func syncDeleteAllOffloaded() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        #expect(try PullFixtures.files(under: lib.dir).isEmpty)
        let sync = try await CLI.run(lib.r2up(["sync", lib.dir, "--prefix", lib.prefix, "--delete", "--min-age", "0"]), environment: lib.env)
        #expect(sync.status == 0, "stderr: \(sync.stderr)")
        #expect(try await OffloadFixtures.objectExists(lib.prefix + "01.m4a"))
        #expect(try await OffloadFixtures.objectExists(lib.prefix + "02.m4a"))
    }

    @Test("an offloaded file named again is counted as cloud only: exit 0, nothing removed")
    func namedAgain() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        let path = lib.dir + "/01.m4a"
        let first = try await CLI.run(lib.r2up(["offload", path]), environment: lib.env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let again = try await CLI.run(lib.r2up(["offload", path]), environment: lib.env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(again.stderr == "Offloaded 0 files (0 bytes freed); 1 already cloud only.\n")
        #expect(try PullFixtures.files(under: lib.dir) == ["02.m4a"])
    }

    @Test("an offloaded track whose object was deleted behind r2up's back: fetch and retry --all fail it (exit 1), naming the track")
    func objectDeleted() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        let path = lib.dir + "/01.m4a"
        let offload = try await CLI.run(lib.r2up(["offload", path]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0])", [lib.prefix + "01.m4a"])
        let fetch = try await CLI.run(lib.r2up(["fetch", path]), environment: lib.env)
        #expect(fetch.status == 1, "stderr: \(fetch.stderr)")
        let retry = try await CLI.run(lib.r2up(["retry", "--all"]), environment: lib.env)
        #expect(retry.status == 1, "stderr: \(retry.stderr)")
        #expect(retry.stderr.hasPrefix("r2up: \(path): "), "\(retry.stderr)")
        #expect(retry.stderr.split(separator: "\n").count == 1, "\(retry.stderr)")
        #expect(try PullFixtures.files(under: lib.dir) == ["02.m4a"])
    }

    @Test("fetch with the server down stops at once: one line, exit 3, every track still cloud only")
    func fetchServerDown() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a", "03.m4a", "04.m4a", "05.m4a", "06.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        var env = lib.env
        env["R2UP_ENDPOINT"] = "http://127.0.0.1:9"  // discard port: nothing listens
        let fetch = try await CLI.run(lib.r2up(["fetch", lib.dir, "--concurrency", "1"]), environment: env)
        #expect(fetch.status == 3, "stderr: \(fetch.stderr)")
        let lines = fetch.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "the stop, then the summary: \(fetch.stderr)")
        #expect(lines.first?.hasPrefix("r2up: the endpoint refused the connection") == true, "\(fetch.stderr)")
        #expect(lines.first?.hasSuffix("; 5 not tried, still cloud only") == true, "\(fetch.stderr)")
        #expect(try PullFixtures.files(under: lib.dir).isEmpty)
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(Set(try PullFixtures.icons(status.stdout).values) == ["cloudOnly"])
    }

    @Test("--older-than and --offload-after refuse a number without a unit (it would be seconds): exit 2, nothing removed")
    func bareNumber() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir, "--older-than", "90"]), environment: lib.env)
        #expect(offload.status == 2)
        #expect(offload.stderr == "r2up: --older-than '90' needs a unit: 90d (days), 90h, 90m or 90s (see r2up offload --help)\n")
        let sync = try await CLI.run(lib.r2up(["sync", lib.dir, "--prefix", lib.prefix, "--offload-after", "30"]), environment: lib.env)
        #expect(sync.status == 2)
        #expect(sync.stderr.hasPrefix("r2up: --offload-after '30' needs a unit"), "\(sync.stderr)")
        let zero = try await CLI.run(lib.r2up(["offload", lib.dir, "--older-than", "0", "--dry-run"]), environment: lib.env)
        #expect(zero.status == 0, "0 needs no unit: \(zero.stderr)")
        #expect(try PullFixtures.files(under: lib.dir) == ["01.m4a"])
    }

    @Test("two fetches of one folder at once share the work: both exit 0, every track downloaded, none failed")
    func twoFetches() async throws {
        let folder = try TemporaryFolder()
        let names = (1...16).map { String(format: "%02d.m4a", $0) }
        let lib = try await OffloadFixtures.library(folder, names)
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        async let first = CLI.run(lib.r2up(["fetch", lib.dir]), environment: lib.env)
        async let second = CLI.run(lib.r2up(["fetch", lib.dir]), environment: lib.env)
        for run in try await [first, second] {
            #expect(run.status == 0, "stderr: \(run.stderr)")
            #expect(!run.stderr.contains("failed"), "\(run.stderr)")
        }
        #expect(try PullFixtures.files(under: lib.dir) == names)
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(Set(try PullFixtures.icons(status.stdout).values) == ["downloaded"], "\(status.stdout)")
    }

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }
}
