import Foundation
import Testing

/// Progress as people see it: bars on a terminal (driven through tmux), plain lines elsewhere.
@Suite("Progress on and off a terminal")
struct ProgressCommandTests {
    /// A file of `size` random bytes, made by head(1) off the cooperative pool (a byte loop in
    /// a debug build held a pool thread for seconds and stalled the other tests' awaits).
    static func track(_ folder: borrowing TemporaryFolder, _ name: String, size: Int) async throws -> String {
        let path = folder.path + "/" + name
        let made = try await ProcessRunner.run("/bin/sh", ["-c", "head -c \(size) /dev/urandom > '\(path)'"], environment: [:])
        guard made.status == 0 else { throw HarnessError("could not make \(path): \(made.stderr)") }
        return path
    }

    @Test("off a terminal, push and sync print plain lines: no escape codes, no carriage returns")
    func plainOffTerminal() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let big = try await Self.track(folder, "library/big.flac", size: 12 << 20)
        let small = try await Self.track(folder, "library/small.mp3", size: 40_000)
        // A terminal type and a UTF-8 locale, as cron under a user's environment may have: only the TTY test counts.
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["TERM"] = "xterm-256color"
        let prefix = "progress-plain-\(UUID().uuidString)/"
        let push = try await CLI.run(
            ["push", big, small, "--prefix", prefix, "--bwlimit", "8M", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        #expect(push.stderr.isEmpty)
        let urls = push.stdout.split(separator: "\n").sorted()
        #expect(urls.count == 2)
        #expect(urls.allSatisfy { $0.hasPrefix("http://") && !$0.contains("\u{1B}") && !$0.contains("\r") })

        // --quiet: nothing but errors.
        let quiet = try await CLI.run(
            ["push", small, "--prefix", prefix + "quiet/", "--quiet", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
        // -q is --quiet (as in rclone and curl).
        let short = try await CLI.run(
            ["push", small, "--prefix", prefix + "q/", "-q", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(short.status == 0 && short.stdout.isEmpty && short.stderr.isEmpty, "\(short)")
        let missing = try await CLI.run(
            ["push", folder.path + "/no such.m4a", "--quiet", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(missing.status == 2 && missing.stdout.isEmpty)
        #expect(missing.stderr.hasPrefix("r2up: ") && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")

        try FileManager.default.removeItem(atPath: folder.path + "/db.sqlite")
        let sync = try await CLI.run(
            ["sync", library, "--prefix", "progress-plain-sync-\(UUID().uuidString)/", "--min-age", "0", "--db", folder.path + "/db.sqlite"],
            environment: env)
        #expect(sync.status == 0, "stderr: \(sync.stderr)")
        #expect(sync.stderr.isEmpty)
        #expect(sync.stdout.hasPrefix("sync: 2 uploaded (12 MB)"), "\(sync.stdout)")
        #expect(sync.stdout.split(separator: "\n").count == 1)
        for text in [push.stdout, push.stderr, sync.stdout, sync.stderr] {
            #expect(!text.contains("\u{1B}") && !text.contains("\r"))
        }
    }

    @Test("in a terminal (tmux), push and sync draw bars that redraw in place, and leave only their results")
    func barsInTmux() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let big = try await Self.track(folder, "big track.flac", size: 24 << 20)
        _ = try await Self.track(folder, "library/one.m4a", size: 10 << 20)
        _ = try await Self.track(folder, "library/two.m4a", size: 10 << 20)
        let tag = UUID().uuidString
        var script = "#!/bin/sh\n"
        for (name, value) in try CLI.serverEnvironment() { script += "export \(name)='\(value)'\n" }
        script += """
            export HOME='\(folder.path)' LANG=C.UTF-8 TERM=screen R2UP_DB='\(folder.path)/db.sqlite'
            unset NO_COLOR LC_ALL LC_CTYPE
            printf '\\033[H\\033[2J'
            '\(CLI.binary)' push '\(big)' --prefix 'tmux-\(tag)/' --bwlimit 8M
            echo "PUSH=$?"
            '\(CLI.binary)' sync '\(library)' --prefix 'tmux-sync-\(tag)/' --min-age 0 --bwlimit 8M
            echo "SYNC=$?"
            exec sleep 600

            """
        let scriptPath = folder.path + "/session.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)

        let tmux = try await Tmux.start(width: 100, height: 30, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        let screens = try await tmux.screens(until: "SYNC=", timeout: 120)
        let screen = screens.last ?? ""
        // "ETA", not "MB/s": on a machine busy with other tests the rate may be in kB/s.
        func showsBars(_ screen: String) -> Bool {
            screen.contains("▕") && screen.contains("ETA") && screen.contains(" files ")
        }
        let barsDuringPush = screens.contains { showsBars($0) && !$0.contains("PUSH=") }
        let barsDuringSync = screens.contains { showsBars($0) && $0.contains("PUSH=") && !$0.contains("SYNC=") }
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(barsDuringPush, "no bars seen during push; last screen:\n\(screen)")
        #expect(barsDuringSync, "no bars seen during sync; last screen:\n\(screen)")
        // What stays: the URL, the exit codes, the summary line; not one bar.
        #expect(lines.count == 4, "screen:\n\(screen)")
        #expect(lines.first?.hasSuffix("/tmux-\(tag)/big%20track.flac") == true, "screen:\n\(screen)")
        #expect(lines.contains("PUSH=0"))
        #expect(lines.contains { $0.hasPrefix("sync: 2 uploaded (20 MB)") })
        #expect(lines.last == "SYNC=0")
        #expect(!screen.contains("▕") && !screen.contains("ETA"))
    }

    @Test("in a terminal (tmux), pull draws the same bars while the bytes land, and leaves the path and its summary")
    func pullBarsInTmux() async throws {
        let folder = try TemporaryFolder()
        let big = try await Self.track(folder, "big track.flac", size: 24 << 20)
        let prefix = "tmux-pull-\(UUID().uuidString)/"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let push = try await CLI.run(["push", big, "--prefix", prefix, "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        var script = "#!/bin/sh\n"
        for (name, value) in try CLI.serverEnvironment() { script += "export \(name)='\(value)'\n" }
        script += """
            export HOME='\(folder.path)' LANG=C.UTF-8 TERM=screen R2UP_DB='\(folder.path)/db.sqlite'
            unset NO_COLOR LC_ALL LC_CTYPE
            printf '\\033[H\\033[2J'
            '\(CLI.binary)' pull '\(prefix)' '\(folder.path)/pulled' --bwlimit 8M
            echo "PULL=$?"
            exec sleep 600

            """
        let scriptPath = folder.path + "/session.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let tmux = try await Tmux.start(width: 100, height: 30, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        let screens = try await tmux.screens(until: "PULL=", timeout: 120)
        let screen = screens.last ?? ""
        let barsDuringPull = screens.contains { $0.contains("▕") && $0.contains("ETA") && !$0.contains("PULL=") }
        #expect(barsDuringPull, "no bars seen during pull; last screen:\n\(screen)")
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(lines.count == 3, "screen:\n\(screen)")
        #expect(lines.first == folder.path + "/pulled/big track.flac", "screen:\n\(screen)")
        #expect(lines.contains { $0.hasPrefix("Pulled 1 file (24 MB)") }, "screen:\n\(screen)")
        #expect(lines.last == "PULL=0")
        #expect(!screen.contains("▕") && !screen.contains("ETA"))
    }
}
