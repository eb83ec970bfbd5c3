import Foundation
import Testing

/// What people coming from the AWS CLI, rclone or s5cmd reach for: history filters and a
/// suggestion for a mistyped command. (rm, ls -r: "Core commands on SeaweedFS and moto".)
@Suite("history filters and command suggestions")
struct ParityCommandTests {
    /// Five uploads, one a day from `ReadCommands.date()`: 2026-11-22 … 2026-11-26, 21:04 UTC.
    static func database(in folder: String) throws -> String {
        let database = folder + "/r2up.sqlite"
        let keys = ["albums/Intro.m4a", "albums/Night Drive.flac", "singles/Café.mp3", "live/Encore.wav", "live/Intro (live).m4a"]
        try ReadCommands.record(
            keys.enumerated().map { ReadCommands.item($0.element, size: 1000, minutes: $0.offset * 1440) }, at: database)
        return database
    }

    static func keys(_ run: CLI.Run) -> [String] {
        run.stdout.split(separator: "\n").dropFirst().map { line in
            // Date, time, zone, size and its unit, then the key; the URL last.
            String(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).dropLast().joined(separator: " "))
        }
    }

    @Test("--limit 0 and --all list every upload; --grep matches file name or key in any case; --since a date or an age")
    func filters() async throws {
        let folder = try TemporaryFolder()
        let database = try Self.database(in: folder.path)
        let env = ReadCommands.environment(home: folder.path)
        func history(_ arguments: [String]) async throws -> CLI.Run {
            try await CLI.run(["history", "--db", database] + arguments, environment: env)
        }
        let all = try await history(["--limit", "0"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect(Self.keys(all).count == 5)
        #expect(try await history(["--all"]).stdout == all.stdout)
        #expect(Self.keys(try await history(["--limit", "2"])) == ["live/Intro (live).m4a", "live/Encore.wav"])

        #expect(Self.keys(try await history(["--grep", "intro"])) == ["live/Intro (live).m4a", "albums/Intro.m4a"])
        #expect(Self.keys(try await history(["--grep", "ALBUMS/"])) == ["albums/Night Drive.flac", "albums/Intro.m4a"])
        // Letters past ASCII fold too (SQLite's lower() folds ASCII only).
        #expect(Self.keys(try await history(["--grep", "CAFÉ"])) == ["singles/Café.mp3"])
        let none = try await history(["--grep", "nothing like it"])
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr == "No uploads match.\n")

        // 2026-11-25 00:00 UTC: the last two (the 25th and the 26th at 21:04).
        #expect(Self.keys(try await history(["--since", "2026-11-25"])) == ["live/Intro (live).m4a", "live/Encore.wav"])
        #expect(Self.keys(try await history(["--since", "2026-11-26 21:04"])) == ["live/Intro (live).m4a"])
        #expect(Self.keys(try await history(["--since", "2026-11-24", "--grep", "live"])) == [
            "live/Intro (live).m4a", "live/Encore.wav",
        ])
        // An age counts back from now: the fixtures are from 2026, so 1d leaves none of them… or all, if
        // the clock is earlier than the fixtures. Either way the command answers.
        #expect(try await history(["--since", "1d"]).status == 0)
    }

    @Test("bad --limit or --since: one line, exit 2", arguments: [
        (["--limit=-1"], "--limit must be 0 (all) or more, got -1"),
        (["--since", "yesterday"], "--since 'yesterday' is not a date like 2026-11-22"),
        (["--since", "2026-02-31"], "--since '2026-02-31' is not a date like 2026-11-22"),
    ])
    func badFilters(arguments: [String], phrase: String) async throws {
        let folder = try TemporaryFolder()
        let run = try await CLI.run(
            ["history", "--db", folder.path + "/r2up.sqlite"] + arguments, environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 2)
        #expect(run.stderr.contains(phrase), "\(run.stderr)")
    }

    @Test("a mistyped command names the nearest one; a word like no command says so; exit 2", arguments: [
        ("psh", "r2up: unknown command 'psh'; did you mean 'push'? (r2up --help lists them)\n"),
        ("histroy", "r2up: unknown command 'histroy'; did you mean 'history'? (r2up --help lists them)\n"),
        ("sycn", "r2up: unknown command 'sycn'; did you mean 'sync'? (r2up --help lists them)\n"),
        ("remove", "r2up: unknown command 'remove' (r2up --help lists the commands)\n"),
    ])
    func suggestion(word: String, message: String) async throws {
        let folder = try TemporaryFolder()
        let run = try await CLI.run([word, "x"], environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 2)
        #expect(run.stderr == message)
        #expect(run.stdout.isEmpty)
        // `r2up help WORD` the same (it printed the overview, exit 0).
        let help = try await CLI.run(["help", word], environment: ReadCommands.environment(home: folder.path))
        #expect(help.status == 2 && help.stderr == message && help.stdout.isEmpty, "\(help.stderr)")
    }

    @Test("help of a command, and of a subcommand, still prints it")
    func helpOfCommands() async throws {
        let folder = try TemporaryFolder()
        for words in [["help", "push"], ["help", "queue", "cancel"]] {
            let run = try await CLI.run(words, environment: ReadCommands.environment(home: folder.path))
            #expect(run.status == 0 && run.stdout.contains("USAGE: r2up \(words.dropFirst().joined(separator: " "))"), "\(run.stdout)")
        }
    }

    @Test("rm without keys or --prefix, or with both, or an empty prefix, is a usage error (exit 2)", arguments: [
        [String](), ["k", "--prefix", "p/"], ["--prefix", ""],
    ])
    func rmUsage(arguments: [String]) async throws {
        let folder = try TemporaryFolder()
        let run = try await CLI.run(["rm"] + arguments, environment: ReadCommands.environment(home: folder.path))
        #expect(run.status == 2, "\(run.stderr)")
    }
}
