import Foundation
import Testing

/// Issue 29 items 3 and 5 at the command line: `sync --delete` keeps the bucket a mirror of the
/// folder without ever touching what it did not upload, and `push DIR` names keys as cp -r does.
@Suite("r2up sync --delete and push DIR naming")
struct MirrorCommandTests {
    func scope(_ label: String) -> String { "tests/mirror-\(label)-\(UInt32.random(in: 0...UInt32.max))/" }

    @Test("sync --delete removes what this store uploaded from files gone or moved, never another's; --dry-run lists; over 10% needs --delete-max")
    func syncDelete() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: lib + "/A", withIntermediateDirectories: true)
        for number in 1...10 {
            let name = number < 10 ? "0\(number)" : "\(number)"
            try Data("track \(number)".utf8).write(to: URL(fileURLWithPath: lib + "/A/\(name).m4a"))
        }
        let scope = scope("delete")
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let sync = ["sync", lib, "--prefix", scope, "--min-age", "0", "--db", db]
        let first = try await CLI.run(sync, environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        // Beside the folder's objects: another track's upload (a file outside the folder) and
        // an object another store wrote. Neither may ever go.
        let other = folder.write("other.m4a", "not in the folder")
        #expect(try await CLI.run(["push", other, "--key", scope + "A/other.m4a", "--db", db], environment: env).status == 0)
        #expect(
            try await CLI.run(["push", other, "--key", scope + "A/foreign.m4a", "--db", folder.path + "/else.sqlite"], environment: env)
                .status == 0)

        // One track deleted, one moved to another folder (its new key is a copy).
        try FileManager.default.removeItem(atPath: lib + "/A/01.m4a")
        try FileManager.default.createDirectory(atPath: lib + "/B", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: lib + "/A/02.m4a", toPath: lib + "/B/02.m4a")
        let all = ["A/01.m4a", "A/02.m4a"] + (3...10).map { $0 < 10 ? "A/0\($0).m4a" : "A/\($0).m4a" } + ["A/foreign.m4a", "A/other.m4a", "B/02.m4a"]

        // Without --delete: the stale objects stay, and the summary says how to remove them.
        let plain = try await CLI.run(sync, environment: env)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains(", 2 stale in the bucket (files gone or moved; sync --delete removes them) in "), "\(plain.stdout)")
        #expect(try await StoredState.read(database: db, scope: scope).objects == all.sorted())

        // 2 of the folder's 11 objects at once is more than 10%: refused, nothing deleted.
        let refused = try await CLI.run(sync + ["--delete"], environment: env)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr == "r2up: --delete: 2 stale objects to delete of 11 this folder uploaded (more than 10%); nothing deleted "
                + "(check the folder is the one you mean, then give --delete-max 2 or --force)\n")
        #expect(try await StoredState.read(database: db, scope: scope).objects == all.sorted())

        let dry = try await CLI.run(sync + ["--delete", "--delete-max", "2", "--dry-run"], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.hasPrefix("would delete \(scope)A/01.m4a (file gone)\nwould delete \(scope)A/02.m4a (moved)\nsync --dry-run: "), "\(dry.stdout)")
        #expect(dry.stdout.contains("2 to delete from the bucket"), "\(dry.stdout)")
        #expect(try await StoredState.read(database: db, scope: scope).objects == all.sorted())

        let done = try await CLI.run(sync + ["--delete", "--delete-max", "2"], environment: env)
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout.hasPrefix("deleted \(scope)A/01.m4a (file gone)\ndeleted \(scope)A/02.m4a (moved)\nsync: "), "\(done.stdout)")
        #expect(done.stdout.contains("2 deleted from the bucket") && !done.stdout.contains("stale"), "\(done.stdout)")
        #expect(try await StoredState.read(database: db, scope: scope).objects == all.filter { $0 != "A/01.m4a" && $0 != "A/02.m4a" }.sorted())

        // Recorded as rm records deletions: the history rows of the deleted objects say so.
        let history = try await CLI.run(["history", "--json", "--all", "--db", db], environment: env)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        let deleted = rows.filter { $0["deletedAt"] is String }.compactMap { $0["r2Key"] as? String }
        #expect(deleted.sorted() == [scope + "A/01.m4a", scope + "A/02.m4a"], "\(history.stdout)")

        // Nothing stale is left; a mirror that is whole deletes nothing.
        let again = try await CLI.run(sync + ["--delete"], environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stdout.contains("stale") && !again.stdout.contains("deleted"), "\(again.stdout)")
    }

    @Test("sync --delete keeps a gone file's object while a file of its size waits for --min-age (a rename: mv changes the ctime); the next run copies it as a move")
    func syncDeleteKeepsWaitingRename() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        for number in 1...10 { try Data("track \(number)".utf8).write(to: URL(fileURLWithPath: lib + "/t\(number).wav")) }
        let scope = scope("rename")
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["sync", lib, "--prefix", scope, "--min-age", "0", "--db", db], environment: env).status == 0)
        try FileManager.default.moveItem(atPath: lib + "/t3.wav", toPath: lib + "/t3-renamed.wav")

        // Just renamed: too young for --min-age 1h, so its old object stays, in the dry run too.
        let young = ["sync", lib, "--prefix", scope, "--delete", "--min-age", "1h", "--db", db]
        let kept = "\(scope)t3.wav (file gone; a file of its size is still being written, decided on the next run)\n"
        let dry = try await CLI.run(young + ["--dry-run"], environment: env)
        #expect(dry.status == 0 && dry.stdout.hasPrefix("would keep " + kept + "sync --dry-run: "), "\(dry.stdout)\(dry.stderr)")
        let waiting = try await CLI.run(young, environment: env)
        #expect(waiting.status == 0, "\(waiting.stderr)")
        #expect(waiting.stdout.hasPrefix("kept " + kept + "sync: "), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("1 waiting (still being written), 1 kept in the bucket (gone, but a file of its size is still being written) in "), "\(waiting.stdout)")
        #expect(try await StoredState.read(database: db, scope: scope).objects.contains("t3.wav"))

        // Old enough now: a move (a copy in the bucket), and --delete removes the old key as moved.
        let moved = try await CLI.run(["sync", lib, "--prefix", scope, "--delete", "--min-age", "0", "--db", db], environment: env)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout.hasPrefix("deleted \(scope)t3.wav (moved)\nsync: 0 uploaded (0 bytes), 1 moved (copied in the bucket"), "\(moved.stdout)")
        let objects = try await StoredState.read(database: db, scope: scope).objects
        #expect(objects.contains("t3-renamed.wav") && !objects.contains("t3.wav"), "\(objects)")
        let history = try await CLI.run(["history", "--json", "--all", "--db", db], environment: env)
        #expect(history.stdout.contains("\"copiedFrom\" : \"\(scope)t3.wav\""), "\(history.stdout)")
    }

    @Test("watch --delete: the first pass and each full pass after it remove the objects of files gone, never another store's")
    func watchDelete() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        for number in 1...10 { try Data("track \(number)".utf8).write(to: URL(fileURLWithPath: lib + "/\(number).m4a")) }
        let scope = scope("watchdelete")
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["sync", lib, "--prefix", scope, "--min-age", "0", "--db", db], environment: env).status == 0)
        // An object another store wrote under the prefix: never this watch's to delete.
        let other = folder.write("other.m4a", "not this store's")
        #expect(
            try await CLI.run(["push", other, "--key", scope + "foreign.m4a", "--db", folder.path + "/else.sqlite"], environment: env)
                .status == 0)
        try FileManager.default.removeItem(atPath: lib + "/1.m4a")

        let watch = try WatchProcess(
            ["watch", lib, "--prefix", scope, "--db", db, "--json", "--min-age", "0s", "--delete", "--rescan", "4s"],
            environment: env, in: folder.path)
        defer { watch.kill() }
        func deletions(_ events: [[String: Any]]) -> [String] {
            events.compactMap { $0["message"] as? String }.filter { $0.hasPrefix("deleted ") }
        }
        // The first pass is a full one: the file gone before the watch started goes from the bucket.
        try await watch.waitFor("the first deletion") { deletions($0).count == 1 }
        #expect(deletions(watch.events) == ["deleted \(scope)1.m4a from the bucket (file gone)"], "\(watch.events)")

        // A file deleted while watching: its object goes at the next full pass (the 4 s rescan).
        try FileManager.default.removeItem(atPath: lib + "/2.m4a")
        _ = folder.write("lib/11.m4a", "track 11")
        try await watch.waitFor("the new upload") { $0.contains { $0["event"] as? String == "uploaded" } }
        try await watch.waitFor("the second deletion", timeout: .seconds(20)) { deletions($0).count == 2 }
        #expect(deletions(watch.events).last == "deleted \(scope)2.m4a from the bucket (file gone)", "\(watch.events)")
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let expected = (3...11).map { "\($0).m4a" } + ["foreign.m4a"]
        #expect(try await StoredState.read(database: db, scope: scope).objects == expected.sorted(), "\(watch.events)")
    }

    @Test("the catalog lists a renamed track once: its old object, left in the bucket, is not a second track")
    func catalogAfterRename() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/Album"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        try Data("first track".utf8).write(to: URL(fileURLWithPath: album + "/01 First.m4a"))
        try Data("second track".utf8).write(to: URL(fileURLWithPath: album + "/02 Second.m4a"))
        let scope = scope("catalog")
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", album + "/", "--prefix", scope, "--db", db], environment: env).status == 0)
        try FileManager.default.moveItem(atPath: album + "/02 Second.m4a", toPath: album + "/02 Second (Remix).m4a")
        let moved = try await CLI.run(["push", album + "/", "--prefix", scope, "--db", db], environment: env)
        #expect(moved.status == 0 && moved.stderr.contains("0 uploaded (0 bytes), 1 copied"), "\(moved.stderr)")
        #expect(try await StoredState.read(database: db, scope: scope).objects.count == 3)
        let publish = try await CLI.run(["catalog", "publish", "--prefix", scope, "--db", db], environment: env)
        #expect(publish.status == 0, "\(publish.stderr)")
        #expect(publish.stdout.hasPrefix("catalog: 2 tracks, "), "\(publish.stdout)")
    }

    @Test("push DIR keeps the folder's name and DIR/ gives its contents; temporary names skipped; URLs in track order; a summary line; --dry-run sends nothing")
    func pushFolderNames() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/Artist/Album (2019)"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        // The first track is the biggest: it finishes last, and its URL still comes first.
        try Data((0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: album + "/01 Intro.m4a"))
        try Data("song".utf8).write(to: URL(fileURLWithPath: album + "/02 Song.m4a"))
        try Data("outro".utf8).write(to: URL(fileURLWithPath: album + "/03 Outro.m4a"))
        for partial in ["04 Next.m4a.part", "05 Later.m4a.crdownload", "~lock.tmp"] {
            try Data("partial".utf8).write(to: URL(fileURLWithPath: album + "/" + partial))
        }
        let scope = scope("names")
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let tracks = ["01 Intro.m4a", "02 Song.m4a", "03 Outro.m4a"]

        // status DIR: the temporary names are not tracks waiting to be uploaded.
        let status = try await CLI.run(["status", album, "--json", "--db", db], environment: env)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("02 Song.m4a"), "\(status.stdout)")
        for partial in [".part", ".crdownload", "~lock.tmp"] { #expect(!status.stdout.contains(partial), "\(status.stdout)") }

        let dry = try await CLI.run(["push", album, "--prefix", scope, "--dry-run", "--db", db], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        let planned = dry.stdout.split(separator: "\n").map(String.init)
        #expect(planned.count == 4, "\(dry.stdout)")
        for (line, track) in zip(planned, tracks) { #expect(line.hasPrefix("would upload \(scope)Album (2019)/\(track) ("), "\(line)") }
        #expect(planned.last?.hasPrefix("push --dry-run: 3 to upload (") == true, "\(dry.stdout)")
        // With --json the same plan is one JSON object, nothing else on stdout.
        let dryJSON = try await CLI.run(["push", album, "--prefix", scope, "--dry-run", "--json", "--db", db], environment: env)
        #expect(dryJSON.status == 0, "\(dryJSON.stderr)")
        let preview = try JSONSerialization.jsonObject(with: Data(dryJSON.stdout.utf8)) as? [String: Any]
        #expect(preview?["dryRun"] as? Bool == true && preview?["wouldUpload"] as? Int == 3, "\(dryJSON.stdout)")
        let files = preview?["files"] as? [[String: Any]] ?? []
        #expect(files.compactMap { $0["key"] as? String } == tracks.map { "\(scope)Album (2019)/\($0)" }, "\(dryJSON.stdout)")
        #expect(files.allSatisfy { $0["action"] as? String == "upload" } && files.first?["size"] as? Int == 6 << 20, "\(dryJSON.stdout)")
        #expect(try await StoredState.read(database: db, scope: scope).objects.isEmpty)

        let push = try await CLI.run(["push", album, "--prefix", scope, "--concurrency", "4", "--bwlimit", "8M", "--db", db], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let urls = push.stdout.split(separator: "\n").map { String($0).removingPercentEncoding ?? String($0) }
        #expect(urls.count == 3 && zip(urls, tracks).allSatisfy { $0.hasSuffix("/\(scope)Album (2019)/\($1)") }, "\(push.stdout)")
        #expect(
            push.stderr.range(
                of: #"^push: 3 uploaded \(6 MB\), 0 copied, 0 skipped \(unchanged\), 0 failed in \d+\.\d s\n$"#, options: .regularExpression) != nil,
            "\(push.stderr)")
        #expect(try await StoredState.read(database: db, scope: scope).objects == tracks.map { "Album (2019)/" + $0 })

        // DIR/ is the contents: the bytes are in the bucket already, so the new keys are copies.
        let contents = try await CLI.run(["push", album + "/", "--prefix", scope, "--db", db], environment: env)
        #expect(contents.status == 0, "\(contents.stderr)")
        #expect(contents.stderr.hasPrefix("push: 0 uploaded (0 bytes), 3 copied, 0 skipped (unchanged), 0 failed in "), "\(contents.stderr)")
        #expect(try await StoredState.read(database: db, scope: scope).objects == (tracks.map { "Album (2019)/" + $0 } + tracks).sorted())

        let again = try await CLI.run(["push", album + "/", "--prefix", scope, "--db", db], environment: env)
        #expect(again.status == 0 && again.stdout.isEmpty, "\(again.stderr)")
        #expect(again.stderr.hasSuffix(" s\n") && again.stderr.contains("\npush: 0 uploaded (0 bytes), 0 copied, 3 skipped (unchanged), 0 failed in "))
    }

    @Test("push --json lists its uploads in track order, as the URLs print, whatever order they finished in (issue 29 item 5)")
    func pushJSONOrder() async throws {
        let folder = try TemporaryFolder()
        let album = folder.path + "/Live (2020)"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        // The first track is the biggest: under --bwlimit it finishes last.
        try Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17) }).write(to: URL(fileURLWithPath: album + "/01 Opening.m4a"))
        let tracks = ["01 Opening.m4a", "02 Song.m4a", "03 Encore.m4a", "10 Outro.m4a"]
        for track in tracks.dropFirst() { try Data(track.utf8).write(to: URL(fileURLWithPath: album + "/" + track)) }
        let scope = scope("json-order")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let push = try await CLI.run(
            ["push", album, "--prefix", scope, "--json", "--concurrency", "4", "--bwlimit", "8M", "--db", folder.path + "/db.sqlite"],
            environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(push.stdout.utf8)) as? [[String: Any]], "\(push.stdout)")
        #expect(items.map { $0["key"] as? String } == tracks.map { "\(scope)Live (2020)/\($0)" }, "\(push.stdout)")
        // The history agrees that the first track finished last: the order is the tracks', not the run's.
        let history = try await CLI.run(["history", "--json", "--limit", "0", "--db", folder.path + "/db.sqlite"], environment: env)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        #expect(rows.first?["r2Key"] as? String == "\(scope)Live (2020)/01 Opening.m4a", "\(history.stdout)")
    }
}
