import Foundation
import R2UpStore
import Testing

/// `r2up copy-url`: prints an upload's URL and hands it to the clipboard tool on PATH.
@Suite("r2up copy-url")
struct CopyURLCommandTests {
    /// A database with three uploads (b.flac newest) and a PATH holding only a fake `xclip`
    /// that writes its stdin to `clip.txt` and its arguments to `args.txt`.
    struct Fixture: ~Copyable {
        let folder: TemporaryFolder
        let database: String
        let ids: [UUID]
        let clip: String
        let env: [String: String]

        init() throws {
            // Everything that can throw runs before `self.folder` is set (a noncopyable field).
            let folder = try TemporaryFolder()
            let database = folder.path + "/r2up.sqlite"
            let ids = [UUID(), UUID(), UUID()]
            try ReadCommands.record([
                ReadCommands.item("albums/a.flac", size: 1, minutes: 0, id: ids[0]),
                ReadCommands.item("albums/b.flac", size: 1, minutes: 2, id: ids[1]),
                ReadCommands.item("other/a.flac", size: 1, minutes: 1, id: ids[2]),
            ], at: database)
            let clip = folder.path + "/clip.txt"
            let bin = folder.path + "/bin"
            _ = try ReadCommands.script(
                "xclip", in: bin, "echo \"$@\" > '\(folder.path)/args.txt'\nexec \(ReadCommands.cat) > '\(clip)'")
            env = ReadCommands.environment(home: folder.path, extra: ["PATH": bin])
            self.database = database
            self.ids = ids
            self.clip = clip
            self.folder = folder
        }

        func run(_ arguments: [String]) async throws -> CLI.Run {
            try await CLI.run(["copy-url"] + arguments + ["--db", database], environment: env)
        }

        var clipboard: String? { ReadCommands.contents(clip).map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test("without an argument: the newest upload's URL, printed and given to xclip on stdin")
    func newest() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run([])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout == "https://pub.example.com/albums/b.flac\n")
        #expect(run.stderr.isEmpty)
        #expect(fixture.clipboard == "https://pub.example.com/albums/b.flac")
        let args = ReadCommands.contents(fixture.folder.path + "/args.txt").map { String(decoding: $0, as: UTF8.self) }
        #expect(args == "-selection clipboard\n")
    }

    @Test("by id, by key, by file name (the newest of that name), by a path to the file")
    func byIDKeyOrFile() async throws {
        let fixture = try Fixture()
        let cases: [(String, String)] = [
            (fixture.ids[0].uuidString, "albums/a.flac"),
            (fixture.ids[2].uuidString.lowercased(), "other/a.flac"),
            ("albums/a.flac", "albums/a.flac"),
            ("a.flac", "other/a.flac"),
            ("/home/me/music/b.flac", "albums/b.flac"),
        ]
        for (argument, key) in cases {
            let run = try await fixture.run([argument])
            #expect(run.status == 0, "\(argument): \(run.stderr)")
            #expect(run.stdout == "https://pub.example.com/\(key)\n", "\(argument)")
            #expect(fixture.clipboard == "https://pub.example.com/\(key)", "\(argument)")
        }
    }

    @Test("by the first characters of an id, as history shows them; an ambiguous prefix is bad input")
    func byIDPrefix() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run([String(fixture.ids[0].uuidString.prefix(8)).lowercased()])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "https://pub.example.com/albums/a.flac\n")

        let folder = try TemporaryFolder()
        let database = folder.path + "/twins.sqlite"
        let twins = ["ABCD1234-0000-4000-8000-000000000001", "ABCD1234-0000-4000-8000-000000000002"].compactMap(UUID.init(uuidString:))
        try ReadCommands.record(
            [ReadCommands.item("x/1.flac", size: 1, minutes: 0, id: twins[0]), ReadCommands.item("x/2.flac", size: 1, minutes: 1, id: twins[1])],
            at: database)
        let ambiguous = try await CLI.run(["copy-url", "abcd1234", "--db", database], environment: fixture.env)
        #expect(ambiguous.status == 2)
        #expect(ambiguous.stderr == "r2up: the id 'abcd1234' matches more than one upload; give more of it\n")
        let exact = try await CLI.run(["copy-url", "abcd1234-0000-4000-8000-000000000002", "--db", database], environment: fixture.env)
        #expect(exact.stdout == "https://pub.example.com/x/2.flac\n")
    }

    @Test("a row whose object was deleted: the URL with a warning naming the date and the live upload of the same file")
    func deletedObject() async throws {
        let fixture = try Fixture()
        try Store(path: fixture.database).recordDeletions(bucket: "tracks", keys: ["albums/a.flac"])
        let run = try await fixture.run([fixture.ids[0].uuidString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "https://pub.example.com/albums/a.flac\n")
        let live = "the same file is live at https://pub.example.com/other/a.flac (id \(fixture.ids[2].uuidString.prefix(8).lowercased()))\n"
        #expect(run.stderr.hasPrefix("warning: albums/a.flac was deleted on ") && run.stderr.hasSuffix(live), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
        // The date is local time with its zone (TZ=UTC here; Tokyo below).
        #expect(run.stderr.contains(#/was deleted on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(by r2up rm, sync --delete or --delete-moved\)/#), "\(run.stderr)")
        let tokyo = try await CLI.run(
            ["copy-url", fixture.ids[0].uuidString, "--db", fixture.database], environment: fixture.env.merging(["TZ": "Asia/Tokyo"]) { $1 })
        #expect(tokyo.stderr.contains(#/was deleted on \d{4}-\d{2}-\d{2} \d{2}:\d{2} \+09:00 \(by r2up rm, sync --delete or --delete-moved\)/#), "\(tokyo.stderr)")

        // Not deleted: no warning.
        let other = try await fixture.run([fixture.ids[2].uuidString])
        #expect(other.stderr.isEmpty, "\(other.stderr)")
    }

    @Test("an unknown id: exit 2, one line pointing at history, nothing copied")
    func unknown() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run(["nope.flac"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "r2up: no upload matches 'nope.flac'; see r2up history\n")
        #expect(fixture.clipboard == nil)
    }

    @Test("an empty store: exit 2 'no uploads yet', with or without an argument")
    func emptyStore() async throws {
        let folder = try TemporaryFolder()
        let env = ReadCommands.environment(home: folder.path)
        for database in [folder.path + "/missing.sqlite", folder.path + "/empty.sqlite"] {
            if database.hasSuffix("empty.sqlite") { try ReadCommands.record([], at: database) }
            for arguments in [[], ["x.flac"]] {
                let run = try await CLI.run(["copy-url"] + arguments + ["--db", database], environment: env)
                #expect(run.status == 2)
                #expect(run.stdout.isEmpty)
                #expect(run.stderr == "r2up: no uploads yet\n")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/missing.sqlite"))
    }

    @Test("no clipboard tool and no terminal: the URL is still printed, stderr says why, exit 0")
    func noClipboard() async throws {
        let fixture = try Fixture()
        let empty = fixture.folder.path + "/empty-bin"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        var env = fixture.env
        env["PATH"] = empty
        let run = try await CLI.run(["copy-url", "--db", fixture.database], environment: env)
        #expect(run.status == 0)
        #expect(run.stdout == "https://pub.example.com/albums/b.flac\n")
        #expect(run.stderr == "r2up: no clipboard tool found (install wl-clipboard, xclip or xsel); the URL is printed above\n")
        #expect(fixture.clipboard == nil)
    }

    @Test("a failing tool is skipped for the next one; when all fail, stderr names them")
    func failingTools() async throws {
        let fixture = try Fixture()
        let bin = fixture.folder.path + "/bin"
        _ = try ReadCommands.script("wl-copy", in: bin, "exit 1")
        let run = try await fixture.run([])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(fixture.clipboard == "https://pub.example.com/albums/b.flac")

        _ = try ReadCommands.script("xclip", in: bin, "exit 3")
        let failed = try await fixture.run([])
        #expect(failed.status == 0)
        #expect(failed.stdout == "https://pub.example.com/albums/b.flac\n")
        #expect(failed.stderr == "r2up: wl-copy failed (exit 1); xclip failed (exit 3); the URL is printed above\n")
    }
}
