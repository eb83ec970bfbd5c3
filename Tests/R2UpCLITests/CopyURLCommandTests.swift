import Foundation
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
