import Foundation
import R2UpTestSupport

/// A detached tmux session on a private socket, typed into with send-keys and read with
/// capture-pane. Every tmux call made while a test awaits runs on a thread of its own, never
/// on the cooperative pool (two threads here), where a blocked call stalls every other test.
final class Tmux: Sendable {
    let socket: String
    /// Server and pane, so stop() can end them by PID even if kill-server does not.
    private let processes: [pid_t]

    private init(socket: String, processes: [pid_t]) {
        self.socket = socket
        self.processes = processes
    }

    /// A session of `width` × `height` cells running `command`.
    static func start(width: Int, height: Int, command: String) async throws -> Tmux {
        try await offThePool {
            let session = Tmux(socket: "r2up-test-\(UUID().uuidString)", processes: [])
            // The server forks off this call and would hold a stdout pipe open forever: no pipe here.
            try session.run(
                ["-f", "/dev/null", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", command], output: false)
            let pids = try session.run(["display-message", "-p", "#{pid} #{pane_pid}"])
            return Tmux(socket: session.socket, processes: pids.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) })
        }
    }

    /// The visible screen as text (no escape codes; tmux drops trailing blanks).
    func capture() async throws -> String {
        try await Self.offThePool { try self.run(["capture-pane", "-p"]) }
    }

    /// Every different screen seen, polled every 50 ms on a thread of its own (a sleep on a busy
    /// cooperative pool missed whole seconds), up to the first that contains `text`.
    /// Throws, with the last screen, when `text` has not appeared within `timeout` seconds.
    func screens(until text: String, timeout: TimeInterval) async throws -> [String] {
        try await Self.offThePool {
            var seen: [String] = []
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let screen = try self.run(["capture-pane", "-p"])
                if seen.last != screen { seen.append(screen) }
                if screen.contains(text) { return seen }
                usleep(50_000)
            }
            throw HarnessError("'\(text)' never appeared; last screen:\n\(seen.last ?? "")")
        }
    }

    /// Types `text` into the pane, then Enter.
    func type(_ text: String) async throws {
        try await Self.offThePool {
            try self.run(["send-keys", "-l", text])
            try self.run(["send-keys", "Enter"])
        }
    }

    /// Presses keys by tmux's names ("C-c", "Enter").
    func press(_ keys: String) async throws {
        _ = try await Self.offThePool { try self.run(["send-keys", keys]) }
    }

    /// Resizes the window, as a user dragging the terminal's corner (the pane gets SIGWINCH).
    func resize(width: Int, height: Int) async throws {
        _ = try await Self.offThePool { try self.run(["resize-window", "-x", "\(width)", "-y", "\(height)"]) }
    }

    /// Ends the session: kill-server, then SIGKILL to server and pane, and the socket removed.
    func stop() {
        _ = try? run(["kill-server"])
        for pid in processes where pid > 1 { kill(pid, SIGKILL) }
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
    }

    private static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// posix_spawn and waitpid: Foundation's Process did not see tmux's client exit here.
    @discardableResult
    fileprivate func run(_ arguments: [String], output: Bool = true) throws -> String {
        let candidates = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]
        guard let tmux = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HarnessError("tmux is not installed (apt-get install tmux); .ci/run installs it")
        }
        // Close-on-exec: a process another test spawns meanwhile must not inherit the write end
        // (the read below would wait for that process to end). dup2 in the child clears it.
        // (Glibc's pipe2 is not visible to Swift; the window between the calls is microseconds.)
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { throw HarnessError("pipe failed") }
        for fd in pipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
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
