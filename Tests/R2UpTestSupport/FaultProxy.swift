public import Foundation

/// tools/faultproxy.py in front of the test server, stopped by PID when released.
public final class FaultProxy: @unchecked Sendable {
    public let process: Process
    public let endpoint: String
    public let logPath: String

    /// Starts the proxy with extra arguments (`--script 1=corrupt-body`, rates, a seed…);
    /// `tool` may be tools/mutateproxy.py, which takes the same --upstream, --log, --max-seconds.
    public init(server: TestServer, arguments: [String], tool: String = "faultproxy.py") async throws {
        let upstream = server.endpoint.replacingOccurrences(of: "http://", with: "")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        logPath = FileManager.default.temporaryDirectory.path + "/faultproxy-\(UUID().uuidString).jsonl"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", root.path + "/tools/" + tool, "--upstream", upstream, "--log", logPath, "--max-seconds", "600"]
            + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is "PORT <n>" (read off the cooperative pool: python may be slow to start).
        let text = try await firstLine(of: out)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw TestSetupError("faultproxy did not start: '\(text)'")
        }
        endpoint = "http://127.0.0.1:\(port)"
    }

    /// The faults it injected, one JSON object each.
    /// With `includingClean` (the proxy started with `--log-all`), every request it saw.
    public func injectedFaults(includingClean: Bool = false) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.filter { $0["summary"] == nil && (includingClean || !($0["fault"] is NSNull)) }
    }

    deinit {
        // SIGKILL: a child spawned from a dispatch worker thread inherits its blocked signal mask,
        // so the proxy's SIGTERM handler may never run.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
