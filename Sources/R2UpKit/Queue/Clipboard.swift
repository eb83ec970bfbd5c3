public import Foundation

/// Puts text on the system clipboard for `r2up copy-url`: the first clipboard tool on
/// PATH (`wl-copy`, `xclip`, `xsel`, `pbcopy`), run directly with the text on its stdin;
/// else OSC 52, which asks the terminal itself (also over SSH) to take it.
///
/// Where tools are looked for and the environment they run in are injected, so a test can
/// put a fake `xclip` first on PATH.
public struct Clipboard: Sendable {
    /// A clipboard program and the arguments that make it read stdin into the clipboard.
    public struct Tool: Sendable, Equatable {
        public var name: String
        public var arguments: [String]
        /// Where it was found on PATH; empty for a candidate not looked up yet.
        public var path: String

        public init(name: String, arguments: [String], path: String = "") {
            self.name = name
            self.arguments = arguments
            self.path = path
        }
    }

    /// What `copy` did.
    public enum Outcome: Sendable, Equatable {
        /// A tool took the text.
        case tool(String)
        /// The text went to the terminal as OSC 52 (whether it obeys cannot be known).
        case terminal
        /// Nothing was copied; `reason` says why, as one line for people.
        case notCopied(reason: String)
    }

    /// The tools tried, in order.
    public static let candidates = [
        Tool(name: "wl-copy", arguments: []),
        Tool(name: "xclip", arguments: ["-selection", "clipboard"]),
        Tool(name: "xsel", arguments: ["--clipboard", "--input"]),
        Tool(name: "pbcopy", arguments: []),
    ]

    /// The environment tools are searched (PATH) and run in (DISPLAY, WAYLAND_DISPLAY, …).
    public var environment: [String: String]
    /// How long a tool may take before it is stopped and counted as failed.
    public var timeout: TimeInterval

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, timeout: TimeInterval = 5) {
        self.environment = environment
        self.timeout = timeout
    }

    /// The candidate tools found on PATH, in order.
    public func availableTools() -> [Tool] {
        Self.candidates.compactMap { candidate in
            Self.find(candidate.name, path: environment["PATH"] ?? "").map {
                var tool = candidate
                tool.path = $0
                return tool
            }
        }
    }

    /// The first executable regular file called `name` in the folders of `path` (a PATH value).
    public static func find(_ name: String, path: String) -> String? {
        for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
            let directory = folder.isEmpty ? "." : String(folder)
            let candidate = directory + "/" + name
            var info = stat()
            guard stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0
            else { continue }
            return candidate
        }
        return nil
    }

    /// The OSC 52 sequence that sets the clipboard (`c`) to `text`: ESC ] 52 ; c ; BASE64 BEL.
    public static func osc52(_ text: String) -> String {
        "\u{1B}]52;c;\(Data(text.utf8).base64EncodedString())\u{07}"
    }

    /// Copies `text` with the first tool that works; when none is found or all fail, writes
    /// OSC 52 through `terminal` if one is given (stdout is a terminal).
    /// - Parameters:
    ///   - text: what to copy.
    ///   - terminal: writes to the terminal; nil when there is none.
    public func copy(_ text: String, terminal: (@Sendable (String) -> Void)? = nil) -> Outcome {
        let tools = availableTools()
        var failures: [String] = []
        for tool in tools {
            if let failure = run(tool, input: text) {
                failures.append("\(tool.name) \(failure)")
            } else {
                return .tool(tool.name)
            }
        }
        if let terminal {
            terminal(Self.osc52(text))
            return .terminal
        }
        if failures.isEmpty {
            return .notCopied(reason: "no clipboard tool found (install wl-clipboard, xclip or xsel)")
        }
        return .notCopied(reason: failures.joined(separator: "; "))
    }

    /// Runs `tool` with `input` on its stdin; nil when it succeeded, else why not.
    ///
    /// Its output goes to /dev/null: `xclip` and `wl-copy` leave a child behind that keeps
    /// serving the selection, and a pipe it inherited would never reach end of file.
    func run(_ tool: Tool, input: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool.path)
        process.arguments = tool.arguments
        process.environment = environment
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return "could not start (\(error.localizedDescription))"
        }
        // A tool that exits without reading must not kill r2up with SIGPIPE (ignored in main,
        // but a library cannot count on that): write, then close, ignoring a broken pipe.
        let writer = stdin.fileHandleForWriting
        try? writer.write(contentsOf: Data(input.utf8))
        try? writer.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return "did not finish within \(Int(timeout)) s"
        }
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal { return "was killed by signal \(status)" }
        return status == 0 ? nil : "failed (exit \(status))"
    }
}
