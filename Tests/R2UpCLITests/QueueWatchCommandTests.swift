import Foundation
import Testing
import R2UpTestSupport

/// `r2up queue --watch`: seed 003's HUD, live from another process's upload.
@Suite("r2up queue --watch")
struct QueueWatchCommandTests {
    /// A database with one finished upload in it (a watch needs one to exist).
    static func seeded(_ folder: borrowing TemporaryFolder, env: [String: String], prefix: String) async throws -> String {
        let db = folder.path + "/db.sqlite"
        let first = folder.write("first.m4a", "a first small upload")
        let push = try await CLI.run(["push", first, "--prefix", prefix, "--db", db], environment: env)
        guard push.status == 0 else { throw HarnessError("seeding push failed: \(push.stderr)") }
        return db
    }

    @Test("in a terminal (tmux), the HUD follows a paced push: the file uploading with a bar, then the counts; Ctrl-C restores the screen, exit 0")
    func hudInTmux() async throws {
        let folder = try TemporaryFolder()
        let server = try CLI.serverEnvironment()
        let env = CLI.environment(server: server, home: folder.path)
        let prefix = "queue-watch-\(UUID().uuidString.prefix(8))/"
        let db = try await Self.seeded(folder, env: env, prefix: prefix)
        let big = try await ProgressCommandTests.track(folder, "big take.flac", size: 5 << 20)
        // Every PUT body paced to ~500 kB/s: about 10 s of uploading for the HUD to show.
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT", default: ""].replacingOccurrences(of: "http://", with: ""),
             "--trickle-rate", "1", "--trickle-bps", "500000", "--only-methods", "PUT", "--max-seconds", "300"])
        defer { proxy.stop() }

        var script = "#!/bin/sh\n"
        for (name, value) in server { script += "export \(name)='\(value)'\n" }
        script += """
            export HOME='\(folder.path)' LANG=C.UTF-8 TERM=screen
            unset NO_COLOR LC_ALL LC_CTYPE
            trap 'true' INT
            echo "BEFORE THE HUD"
            '\(CLI.binary)' queue --watch --db '\(db)'
            echo "EXIT=$?"
            exec sleep 600

            """
        let scriptPath = folder.path + "/session.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let tmux = try await Tmux.start(width: 100, height: 30, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        let idle = try await tmux.screens(until: "Last completed: \(prefix)first.m4a", timeout: 30).last ?? ""
        #expect(idle.contains("0 queued · 0 uploading · 0 failed"), "screen:\n\(idle)")
        #expect(!idle.contains("BEFORE THE HUD"), "the HUD draws on the alternate screen:\n\(idle)")

        var through = env
        through["R2UP_ENDPOINT"] = proxy.endpoint
        async let push = CLI.run(["push", big, "--prefix", prefix, "--db", db], environment: through)
        let uploading = try await tmux.screens(until: "MB / 5 MB  ", timeout: 60)
        let screen = uploading.last ?? ""
        let row = screen.split(separator: "\n").first { $0.contains("big take.flac") }.map(String.init) ?? ""
        #expect(screen.contains("1 uploading"), "screen:\n\(screen)")
        #expect(screen.contains("Uploading now"), "screen:\n\(screen)")
        #expect(row.hasPrefix("  ↑ \(prefix)big take.flac  ▕"), "row: \(row)\nscreen:\n\(screen)")
        #expect(row.contains("%  ") && row.contains("▏"), "row: \(row)")
        // The rate needs two reports that saw the bytes grow.
        let rated = try await tmux.screens(until: "/s\n", timeout: 30).last ?? ""
        #expect(rated.contains("Uploading now · "), "screen:\n\(rated)")
        #expect(screen.split(separator: "\n").count <= 30)

        let pushed = try await push
        #expect(pushed.status == 0, "push: \(pushed.stderr)")
        let done = try await tmux.screens(until: "Last completed: \(prefix)big take.flac", timeout: 30).last ?? ""
        #expect(done.contains("0 queued · 0 uploading · 0 failed"), "screen:\n\(done)")
        #expect(!done.contains("Uploading now"), "screen:\n\(done)")

        // A narrow window: redrawn at once to its width, every line cut, none wrapped.
        try await tmux.resize(width: 40, height: 6)
        let narrow = try await tmux.screens(until: "…", timeout: 10).last ?? ""
        let rows = narrow.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(rows.first?.hasPrefix("Queue at ") == true, "screen:\n\(narrow)")
        #expect(rows.dropFirst().first == "0 queued · 0 uploading · 0 failed", "screen:\n\(narrow)")
        #expect(rows.contains { $0.hasPrefix("Last completed: queue-watch-") && $0.hasSuffix("…") && $0.count == 39 }, "screen:\n\(narrow)")

        try await tmux.press("C-c")
        let after = try await tmux.screens(until: "EXIT=", timeout: 20).last ?? ""
        #expect(after.contains("BEFORE THE HUD\nEXIT=0"), "screen:\n\(after)")
        #expect(!after.contains("Queue at"), "screen:\n\(after)")
    }

    /// Runs `arguments` with stdout on a pipe, does `action` (SIGTERM) to it after `seconds`, and returns what it printed.
    static func runFor(
        _ seconds: Double, _ arguments: [String], environment: [String: String],
        then action: @escaping @Sendable (pid_t) -> Void = { kill($0, SIGTERM) }
    ) async throws -> CLI.Run {
        try await ProcessRunner.offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            process.environment = environment
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let pid = process.processIdentifier
            let killer = DispatchWorkItem { action(pid) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: killer)
            let box = OutputBox()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                box.data = out.fileHandleForReading.readDataToEndOfFile()
                done.signal()
            }
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            done.wait()
            process.waitUntilExit()
            killer.cancel()
            return CLI.Run(
                status: process.terminationStatus, stdout: String(decoding: box.data, as: UTF8.self),
                stderr: String(decoding: errData, as: UTF8.self))
        }
    }

    private final class OutputBox: @unchecked Sendable { var data = Data() }

    @Test("off a terminal: one plain report or one JSON line per interval, no escape codes; SIGTERM exits 0; a closed pipe 141")
    func offTerminal() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let prefix = "queue-watch-plain-\(UUID().uuidString.prefix(8))/"
        let db = try await Self.seeded(folder, env: env, prefix: prefix)

        let json = try await Self.runFor(2.2, ["queue", "--watch", "--json", "--interval", "0.5", "--db", db], environment: env)
        #expect(json.status == 0, "stderr: \(json.stderr)")
        #expect(json.stderr.isEmpty)
        let lines = json.stdout.split(separator: "\n")
        #expect((3...6).contains(lines.count), "\(json.stdout)")
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect((object["counts"] as? [String: Int]) == ["queued": 0, "uploading": 0, "interrupted": 0, "failed": 0])
            #expect((object["lastCompleted"] as? [String: Any])?["r2Key"] as? String == prefix + "first.m4a")
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)
        }

        var terminalish = env
        terminalish["TERM"] = "xterm-256color"
        terminalish["TZ"] = "Asia/Tokyo"  // each report's time carries its zone (issue 29 item 8)
        let plain = try await Self.runFor(1.6, ["queue", "--watch", "--db", db], environment: terminalish)
        #expect(plain.status == 0, "stderr: \(plain.stderr)")
        // Each report: the time, the counts, a blank line, the last upload, then a blank line before the next.
        let blocks = plain.stdout.components(separatedBy: "\n\nQueue at ")
        #expect((2...3).contains(blocks.count), "\(plain.stdout)")
        for (index, block) in blocks.enumerated() {
            let rows = (index == 0 ? block : "Queue at " + block).components(separatedBy: "\n")
            #expect(rows.count == (index == blocks.count - 1 ? 6 : 4), "\(block)")
            #expect(rows[0].wholeMatch(of: #/Queue at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+09:00/#) != nil, "\(block)")
            #expect(Array(rows.dropFirst().prefix(2)) == ["0 queued · 0 uploading · 0 failed", ""], "\(block)")
            #expect(rows[3].hasPrefix("Last completed: \(prefix)first.m4a  20 bytes  20") && rows[3].hasSuffix(" +09:00"), "\(block)")
        }
        #expect(!plain.stdout.contains("\u{1B}") && !plain.stdout.contains("\r"))

        let piped = try await ProcessRunner.run(
            "/bin/bash", ["-c", "'\(CLI.binary)' queue --watch --db '\(db)' | head -1; echo \"${PIPESTATUS[0]}\""], environment: env)
        #expect(piped.stdout.hasPrefix("Queue at 20") && piped.stdout.hasSuffix("\n141\n"), "\(piped.stdout)")
        #expect(piped.stderr.isEmpty, "\(piped.stderr)")

        // Another process holds the write lock for 4 s (a long sync commit): the watch opens and
        // reads through it (read-only, WAL), never waiting for the lock.
        let marker = folder.path + "/locked"
        let hold = """
            import os, sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute("BEGIN IMMEDIATE")
            c.execute("UPDATE jobs SET attempts = attempts")
            open(sys.argv[2], "w").close()
            time.sleep(4)
            c.execute("COMMIT")
            """
        async let holder = ProcessRunner.run("/usr/bin/env", ["python3", "-c", hold, db, marker], environment: ProcessInfo.processInfo.environment)
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: marker) && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let locked = try await Self.runFor(2, ["queue", "--watch", "--json", "--interval", "0.5", "--db", db], environment: env)
        let held = try await holder
        #expect(held.status == 0, "\(held.stderr)")
        #expect(locked.status == 0 && locked.stderr.isEmpty, "\(locked.stderr)")
        #expect(locked.stdout.split(separator: "\n").count >= 3, "reports while the write lock was held: \(locked.stdout)")
        #expect(!locked.stdout.contains("busy"))

        // The database deleted while watched: one line, exit 5 (a store error), not a stale HUD forever.
        let gone = try await Self.runFor(1.2, ["queue", "--watch", "--json", "--interval", "0.3", "--db", db], environment: env) { _ in
            for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) }
        }
        #expect(gone.status == 5, "stderr: \(gone.stderr)")
        #expect(gone.stderr == "r2up: the database at \(db) is gone (deleted or moved); nothing to watch\n")
        #expect(gone.stdout.split(separator: "\n").count >= 2, "\(gone.stdout)")
    }

    @Test("no database: one line and exit 5; --interval without --watch or out of range: exit 2")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(home: folder.path)
        let missing = try await CLI.run(["queue", "--watch", "--db", folder.path + "/none.sqlite"], environment: env)
        #expect(missing.status == 5)
        #expect(
            missing.stderr
                == "r2up: no database at \(folder.path)/none.sqlite: nothing was ever queued there; push, sync or watch creates it (or give --db)\n")
        #expect(missing.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/none.sqlite"))
        let lone = try await CLI.run(["queue", "--interval", "2", "--db", folder.path + "/none.sqlite"], environment: env)
        #expect(lone.status == 2 && lone.stderr.contains("--interval goes with --watch"), "\(lone.stderr)")
        let zero = try await CLI.run(["queue", "--watch", "--interval", "0", "--db", folder.path + "/none.sqlite"], environment: env)
        #expect(zero.status == 2 && zero.stderr.contains("--interval must be from 0.1 to 3600 seconds"), "\(zero.stderr)")
    }
}
