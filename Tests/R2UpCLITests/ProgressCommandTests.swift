import Foundation
import Testing

/// Progress as people see it: bars on a terminal (driven through tmux), plain lines elsewhere.
@Suite("Progress on and off a terminal")
struct ProgressCommandTests {
    /// A file of `size` pseudo-random bytes (compressible data would not matter, but real tracks are not).
    static func track(_ folder: borrowing TemporaryFolder, _ name: String, size: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { word in
                for offset in 0..<min(8, size - index) { bytes[index + offset] = word[offset] }
            }
        }
        let path = folder.path + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test("off a terminal, push and sync print plain lines: no escape codes, no carriage returns")
    func plainOffTerminal() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let big = Self.track(folder, "library/big.flac", size: 12 << 20)
        let small = Self.track(folder, "library/small.mp3", size: 40_000)
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
        let big = Self.track(folder, "big track.flac", size: 24 << 20)
        _ = Self.track(folder, "library/one.m4a", size: 10 << 20)
        _ = Self.track(folder, "library/two.m4a", size: 10 << 20)
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

        let tmux = try Tmux(width: 100, height: 30, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        var barsDuringPush = false
        var barsDuringSync = false
        var screen = ""
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            screen = try tmux.capture()
            let showsBars = screen.contains("▕") && screen.contains("MB/s") && screen.contains(" files ")
            if showsBars && !screen.contains("PUSH=") { barsDuringPush = true }
            if showsBars && screen.contains("PUSH=") && !screen.contains("SYNC=") { barsDuringSync = true }
            if screen.contains("SYNC=") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
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
}

/// A detached tmux session on a private socket, read with capture-pane.
struct Tmux: ~Copyable {
    let socket = "r2up-test-\(UUID().uuidString)"
    private var processes: [pid_t] = []

    init(width: Int, height: Int, command: String) throws {
        // The server forks off this call and would hold a stdout pipe open forever: no pipe here.
        try run(["-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", command], output: false)
        // Server and pane by PID, so stop() can end them even if kill-server does not.
        let pids = try run(["display-message", "-p", "#{pid} #{pane_pid}"])
        processes = pids.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
    }

    /// The visible screen as text (no escape codes), trailing blank lines dropped.
    func capture() throws -> String {
        try run(["capture-pane", "-p"])
    }

    /// Types `text` into the pane, then Enter.
    func type(_ text: String) throws {
        try run(["send-keys", "-l", text])
        try run(["send-keys", "Enter"])
    }

    func stop() {
        _ = try? run(["kill-server"])
        for pid in processes where pid > 1 { kill(pid, SIGKILL) }
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
    }

    /// posix_spawn and waitpid: Foundation's Process did not see tmux's client exit here.
    @discardableResult
    private func run(_ arguments: [String], output: Bool = true) throws -> String {
        let candidates = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        guard let tmux = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("tmux is not installed (apt-get install tmux); .ci/run installs it")
        }
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { throw HarnessError("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // The server forks off `new-session` and would hold a stdout pipe open forever.
        if output {
            posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        environment["TMUX"] = nil
        let argv = ([tmux, "-u", "-L", socket] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The server inherits the signal mask: the test runner's blocks SIGCHLD and SIGTERM,
        // and a tmux server that never sees them never exits.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tmux, &actions, &attributes, argv, envp)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { throw HarnessError("tmux did not start: \(String(cString: strerror(spawned)))") }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw HarnessError("tmux \(arguments.first ?? "") exited with status \(status)") }
        return String(decoding: data, as: UTF8.self)
    }
}
