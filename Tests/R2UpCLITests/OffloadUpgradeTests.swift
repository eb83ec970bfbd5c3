import Foundation
import Testing

/// A library offloaded by an r2up from before the offload mark (schema v10), upgraded.
@Suite("r2up offload before schema v10, upgraded")
struct OffloadUpgradeTests {
    @Test("sync --delete --force after the upgrade keeps the object of a track offloaded before v10; a file deleted by hand since is mirrored")
    func keepsOffloadedBeforeV10() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["a/01.m4a", "a/02.m4a", "a/03.m4a"])
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir + "/a/01.m4a"]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        // What an offload before v10 left, after v10's migration: no mark, and v11 not run yet.
        let forget = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.execute("UPDATE tracks SET offloadedETag = NULL")
            c.execute("DELETE FROM grdb_migrations WHERE identifier = 'v11-offloaded-before-v10'")
            c.commit()
            """
        let reset = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", forget, lib.db], environment: ProcessInfo.processInfo.environment)
        #expect(reset.status == 0, "\(reset.stderr)")

        // The first command after the upgrade marks the track; a file deleted by hand since is not marked.
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(status.stdout)[lib.dir + "/a/01.m4a"] == "cloudOnly")
        try FileManager.default.removeItem(atPath: lib.dir + "/a/02.m4a")
        let sync = ["sync", lib.dir, "--prefix", lib.prefix, "--min-age", "0", "--delete", "--force", "--json"]
        let mirror = try await CLI.run(lib.r2up(sync), environment: lib.env)
        #expect(mirror.status == 0, "stderr: \(mirror.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(mirror.stdout.utf8)) as? [String: Any])
        let deletions = try #require(summary["deletions"] as? [[String: Any]], "\(mirror.stdout)")
        #expect(deletions.compactMap { $0["key"] as? String } == [lib.prefix + "a/02.m4a"])
        #expect(try await OffloadFixtures.objectExists(lib.prefix + "a/01.m4a"), "the only copy of the track offloaded before v10")
        #expect(try await !OffloadFixtures.objectExists(lib.prefix + "a/02.m4a"))

        // It fetches as any offloaded track.
        let fetch = try await CLI.run(lib.r2up(["fetch", lib.dir + "/a/01.m4a"]), environment: lib.env)
        #expect(fetch.status == 0, "stderr: \(fetch.stderr)")
        #expect(PullFixtures.text(lib.dir + "/a/01.m4a") == "a/01.m4a")
    }
}
