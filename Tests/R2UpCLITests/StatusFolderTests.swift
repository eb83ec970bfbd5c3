import Foundation
import Testing

/// `r2up status DIR` over the real server: every file push would take, known or not, with its
/// state following the file (issue 14: items 1 and 5).
@Suite("r2up status DIR")
struct StatusFolderTests {
    @Test("a folder of 5 with 2 pushed is ↑ 2/5 (hollow) with the 3 local tracks listed; nested folders are groups")
    func unknownFilesListed() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/album"
        try StatusFiles.make(dir, ["1.bin", "2.bin", "3.bin", "4.bin", "5.bin", "sub/6.bin", "sub/deep/7.bin", ".hidden"])
        let env = try PullFixtures.env(folder)
        let db = ["--db", folder.path + "/db.sqlite"]
        let prefix = PullFixtures.scratchPrefix("status-five")
        let push = try await CLI.run(["push", dir + "/1.bin", dir + "/2.bin", "--prefix", prefix] + db, environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        let deep = try await CLI.run(["push", dir + "/sub/deep/7.bin", "--prefix", prefix + "sub/deep"] + db, environment: env)
        #expect(deep.status == 0, "stderr: \(deep.stderr)")

        let run = try await CLI.run(["status", dir] + db, environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout == """
            \(dir)  (5)  ⇡ 2/5
              ↑ 1.bin
              ↑ 2.bin
                3.bin
                4.bin
                5.bin
            \(dir)/sub  (1)
                6.bin
            \(dir)/sub/deep  (1)  ↑
              ↑ 7.bin

            7 tracks: 3 uploaded, 4 not uploaded

            """)
        let json = try await CLI.run(["status", dir, "--json"] + db, environment: env)
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let summary = try #require(groups.first?["summary"] as? [String: Any])
        #expect(summary["name"] as? String == "partial")
        #expect(summary["uploaded"] as? Int == 2)
        #expect(summary["total"] as? Int == 5)
        #expect(try PullFixtures.icons(json.stdout)[dir + "/3.bin"] == "localOnly")
        #expect(try PullFixtures.icons(json.stdout).count == 7)

        // Without a folder: only the known tracks.
        let known = try await CLI.run(["status"] + db, environment: env)
        #expect(known.stdout == "\(dir)  (2)  ↑\n  ↑ 1.bin\n  ↑ 2.bin\n\(dir)/sub/deep  (1)  ↑\n  ↑ 7.bin\n\n3 tracks: 3 uploaded\n")
    }

    @Test("an edited track is not uploaded (changed since upload); a deleted one is cloud only; text and JSON")
    func editedAndDeleted() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/album"
        try StatusFiles.make(dir, ["a.bin", "b.bin", "c.bin"])
        let env = try PullFixtures.env(folder)
        let db = ["--db", folder.path + "/db.sqlite"]
        let push = try await CLI.run(["push", dir + "/", "--prefix", PullFixtures.scratchPrefix("status-edit")] + db, environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        try Data("edited after its upload".utf8).write(to: URL(fileURLWithPath: dir + "/b.bin"))
        try FileManager.default.removeItem(atPath: dir + "/c.bin")

        let run = try await CLI.run(["status", dir] + db, environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout == "\(dir)  (3)  ⇡ 1/3\n  ↑ a.bin\n    b.bin (changed since upload)\n  ☁ c.bin\n\n3 tracks: 1 uploaded, 1 cloud only, 1 not uploaded\n")
        let all = try await CLI.run(["status"] + db, environment: env)
        #expect(all.stdout == run.stdout)

        let json = try await CLI.run(["status", dir, "--json"] + db, environment: env)
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let tracks = try #require(groups.first?["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["icon"] as? String } == ["uploaded", "localOnly", "cloudOnly"])
        #expect(tracks.map { $0["changedSinceUpload"] as? Bool } == [false, true, false])
        #expect(tracks.map { $0["uploadState"] as? String } == ["uploaded", "none", "none"])
    }

    @Test("status --remote reads the prefix all the folder's tracks agree on; when they disagree it asks for --prefix")
    func remotePrefix() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/album"
        try StatusFiles.make(dir, ["a.bin", "sub/b.bin"])
        let env = try PullFixtures.env(folder)
        let db = ["--db", folder.path + "/db.sqlite"]
        let prefix = PullFixtures.scratchPrefix("status-remote")
        let push = try await CLI.run(["push", dir + "/", "--prefix", prefix] + db, environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        try await PullFixtures.put([(prefix + "c.bin", .text("only in the cloud"))])

        let agree = try await CLI.run(["status", dir, "--remote", "--json"] + db, environment: env)
        #expect(agree.status == 0, "stderr: \(agree.stderr)")
        #expect(
            try PullFixtures.icons(agree.stdout)
                == [dir + "/a.bin": "uploaded", dir + "/sub/b.bin": "uploaded", dir + "/c.bin": "cloudOnly"])

        // One track elsewhere: no prefix stands for the folder any more.
        let other = folder.write("album/d.bin", "d")
        let moved = try await CLI.run(["push", other, "--key", PullFixtures.scratchPrefix("elsewhere") + "d.bin"] + db, environment: env)
        #expect(moved.status == 0, "stderr: \(moved.stderr)")
        let disagree = try await CLI.run(["status", dir, "--remote"] + db, environment: env)
        #expect(disagree.status == 2)
        #expect(disagree.stdout.isEmpty)
        #expect(disagree.stderr == "r2up: the tracks in \(dir) are under different prefixes; give --prefix\n")
        let given = try await CLI.run(["status", dir, "--remote", "--prefix", prefix, "--json"] + db, environment: env)
        #expect(given.status == 0, "stderr: \(given.stderr)")
        #expect(try PullFixtures.icons(given.stdout)[dir + "/c.bin"] == "cloudOnly")
    }
}

/// Files for status tests.
enum StatusFiles {
    /// Creates each relative path under `root` (folders too), each holding its own name.
    static func make(_ root: String, _ names: [String]) throws {
        for name in names {
            let path = root + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(name.utf8).write(to: URL(fileURLWithPath: path))
        }
    }

    /// The file's mtime in nanoseconds, as r2up records it.
    static func mtimeNs(_ path: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HarnessError("cannot stat \(path)") }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}
