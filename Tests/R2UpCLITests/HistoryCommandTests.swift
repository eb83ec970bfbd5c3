import Foundation
import Testing

/// `r2up history`: the upload history from the database alone, newest first.
@Suite("r2up history")
struct HistoryCommandTests {
    @Test("no database: says so on stderr, naming the path, and exits 0; --json prints []")
    func emptyStore() async throws {
        let folder = try TemporaryFolder()
        let env = ReadCommands.environment(home: folder.path)
        let database = folder.path + "/data/r2up.sqlite"

        let run = try await CLI.run(["history", "--db", database], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.isEmpty)
        // No database there (a fresh machine, or a typo in --db): the path is named.
        #expect(run.stderr == "No uploads yet: there is no database at \(database).\n")

        let json = try await CLI.run(["history", "--json", "--db", database], environment: env)
        #expect(json.status == 0)
        #expect(json.stdout == "[]\n")
        #expect(json.stderr.isEmpty)

        // Reading never creates the database, nor its folder.
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/data"))
    }

    @Test("an existing but empty database is an empty history too")
    func emptyDatabase() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        try ReadCommands.record([], at: database)
        let run = try await CLI.run(["history", "--db", database], environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 0)
        #expect(run.stderr == "No uploads yet.\n")
    }

    @Test("the default database is found through R2UP_DB, then XDG_DATA_HOME, without any S3 settings")
    func databaseFromEnvironment() async throws {
        let folder = try TemporaryFolder()
        try ReadCommands.record([ReadCommands.item("a.m4a", size: 1, minutes: 0)], at: folder.path + "/env.sqlite")
        try ReadCommands.record([ReadCommands.item("b.m4a", size: 1, minutes: 0)], at: folder.path + "/xdg/r2up/r2up.sqlite")

        let byEnv = try await CLI.run(
            ["history"], environment: ReadCommands.environment(home: folder.path, extra: ["R2UP_DB": folder.path + "/env.sqlite"]))
        #expect(byEnv.status == 0, "stderr: \(byEnv.stderr)")
        #expect(byEnv.stdout.contains("a.m4a"))

        let byXDG = try await CLI.run(
            ["history"], environment: ReadCommands.environment(home: folder.path, extra: ["XDG_DATA_HOME": folder.path + "/xdg"]))
        #expect(byXDG.status == 0, "stderr: \(byXDG.stderr)")
        #expect(byXDG.stdout.contains("b.m4a"))
    }

    @Test("--json: UploadItem objects with exactly the DESIGN §3 keys, newest first")
    func json() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        let ids = [UUID(), UUID(), UUID()]
        try ReadCommands.record([
            ReadCommands.item("albums/old.flac", size: 500, minutes: 0, id: ids[0]),
            ReadCommands.item("albums/new.flac", size: 2_500_000, minutes: 20, id: ids[1], etag: nil),
            ReadCommands.item("albums/mid.flac", size: 1024, minutes: 10, id: ids[2]),
        ], at: database)

        let run = try await CLI.run(["history", "--json", "--db", database], environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        let objects = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        #expect(objects.count == 3)
        let keys = ["bucket", "copiedFrom", "deletedAt", "etag", "fileName", "fileSize", "id", "publicURL", "r2Key", "uploadDate"]
        for object in objects { #expect(object.keys.sorted() == keys) }
        #expect(objects.allSatisfy { $0["deletedAt"] is NSNull })
        #expect(objects.allSatisfy { $0["copiedFrom"] is NSNull })
        #expect(objects.map { $0["id"] as? String } == [ids[1], ids[2], ids[0]].map(\.uuidString))

        let newest = objects[0]
        #expect(newest["fileName"] as? String == "new.flac")
        #expect((newest["fileSize"] as? NSNumber)?.int64Value == 2_500_000)
        #expect(newest["r2Key"] as? String == "albums/new.flac")
        #expect(newest["uploadDate"] as? String == "2026-11-22T21:24:05Z")
        #expect(newest["publicURL"] as? String == "https://pub.example.com/albums/new.flac")
        #expect(newest["bucket"] as? String == "tracks")
        #expect(newest["etag"] is NSNull)
        #expect(objects[1]["etag"] as? String == "\"etag\"")

        // Keys in sorted order, slashes not escaped.
        let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let keyOrder = lines.compactMap { line -> String? in
            guard line.hasPrefix("\"") else { return nil }
            return String(line.dropFirst().prefix { $0 != "\"" })
        }
        #expect(Array(keyOrder.prefix(keys.count)) == keys)
        #expect(run.stdout.contains("\"publicURL\" : \"https://pub.example.com/albums/new.flac\""))
    }

    @Test("the table: local date to the minute, sizes for people, key and URL aligned")
    func table() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        try ReadCommands.record([
            ReadCommands.item("a.m4a", size: 500, minutes: 0),
            ReadCommands.item("mixes/b.flac", size: 1024, minutes: 1),
            ReadCommands.item("c.wav", size: 2_500_000, minutes: 62),
        ], at: database)

        let run = try await CLI.run(["history", "--db", database], environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        #expect(run.stdout == """
            DATE                       SIZE  KEY           URL
            2026-11-22 22:06 UTC     2.4 MB  c.wav         https://pub.example.com/c.wav
            2026-11-22 21:05 UTC       1 KB  mixes/b.flac  https://pub.example.com/mixes/b.flac
            2026-11-22 21:04 UTC  500 bytes  a.m4a         https://pub.example.com/a.m4a

            """)

        // Local time follows TZ.
        let tokyo = try await CLI.run(
            ["history", "--limit", "1", "--db", database],
            environment: ReadCommands.environment(home: folder.path, extra: ["TZ": "Asia/Tokyo"]))
        #expect(tokyo.stdout.split(separator: "\n").last?.hasPrefix("2026-11-23 07:06 +09:00 ") == true, "\(tokyo.stdout)")
    }

    @Test("--limit keeps the newest N; the default is 20; 0 is all")
    func limit() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        try ReadCommands.record((0..<25).map { ReadCommands.item("t\($0).m4a", size: 1, minutes: $0) }, at: database)
        let env = ReadCommands.environment(home: folder.path)

        let two = try await CLI.run(["history", "--limit", "2", "--db", database], environment: env)
        #expect(two.status == 0)
        let rows = two.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 2)
        #expect(rows.first?.contains("t24.m4a") == true)
        #expect(rows.last?.contains("t23.m4a") == true)
        // More rows exist: said on stderr, the table stays as it is (issue 29 item 8).
        #expect(two.stderr == "Showing the latest 2 uploads; more exist: --limit N shows more, --all every one.\n")
        let exact = try await CLI.run(["history", "--limit", "25", "--db", database], environment: env)
        #expect(exact.stderr.isEmpty, "\(exact.stderr)")

        let all = try await CLI.run(["history", "--json", "--db", database], environment: env)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]])
        #expect(objects.count == 20)

        // --limit 0: no limit (issue 17), as `--all`.
        let zero = try await CLI.run(["history", "--limit", "0", "--db", database], environment: env)
        #expect(zero.status == 0)
        #expect(zero.stdout.split(separator: "\n").dropFirst().count == 25)
        #expect(zero.stderr.isEmpty)
    }

    @Test("a damaged database: exit 5, one line naming it, and the file left as it was")
    func corruptDatabase() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try garbage.write(to: URL(fileURLWithPath: database))

        for arguments in [["history"], ["history", "--json"], ["copy-url"], ["status"], ["status", "--json"]] {
            let run = try await CLI.run(arguments + ["--db", database], environment: ReadCommands.environment(home: folder.path))
            #expect(run.status == 5, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(
                run.stderr == "r2up: the database at \(database) is damaged or not a database (file is not a database); it was left as it is\n")
        }
        #expect(ReadCommands.contents(database) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["r2up.sqlite"])
    }
}
