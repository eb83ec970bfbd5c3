import Foundation
import R2UpTestSupport

/// tools/wanrelay.py in front of the test server (a round trip, a reply delay, an uplink, its
/// faults), stopped by PID; `stop()` returns what it counted.
final class WanRelay: @unchecked Sendable {
    let process: Process
    let endpoint: String
    let statsPath: String

    /// What the relay counted over its life (its --stats file).
    struct Stats {
        var requests: Int
        /// PUT requests (single PUTs and parts): `requests - puts` are the HEADs, lists, creates and completions.
        var puts: Int
        var putPayload: Int
        var putPayloadAgain: Int
        var faults503: Int
        var faults429: Int
        var firstFaultAt: Double?
        /// (seconds since start, most requests in flight in that 100 ms)
        var inFlight: [(Double, Int)]

        /// The most requests in flight between two times.
        func mostInFlight(from start: Double, to end: Double = .infinity) -> Int {
            inFlight.filter { $0.0 >= start && $0.0 < end }.map(\.1).max() ?? 0
        }
    }

    init(server: TestServer, arguments: [String]) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        statsPath = FileManager.default.temporaryDirectory.path + "/wanrelay-\(UUID().uuidString).json"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", root.path + "/tools/wanrelay.py", "--upstream", server.endpoint, "--stats", statsPath, "--max-seconds", "300"]
            + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = try await firstLine(of: out)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw TestSetupError("wanrelay did not start: '\(text)'")
        }
        endpoint = "http://127.0.0.1:\(port)"
    }

    /// Stops the relay (SIGTERM, it writes its stats) and reads them.
    func stop() throws -> Stats {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: statsPath))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let requests = object["requests"] as? Int, let puts = object["puts"] as? Int, let payload = object["put_payload"] as? Int,
            let again = object["put_payload_again"] as? Int, let faults = object["faults"] as? [String: Int],
            let timeline = object["in_flight_per_100ms"] as? [[Double]]
        else { throw TestSetupError("wanrelay's stats are not what it writes: \(String(decoding: data, as: UTF8.self))") }
        return Stats(
            requests: requests, puts: puts, putPayload: payload, putPayloadAgain: again, faults503: faults["503"] ?? 0,
            faults429: faults["429"] ?? 0, firstFaultAt: object["first_fault_at"] as? Double,
            inFlight: timeline.compactMap { $0.count == 2 ? ($0[0], Int($0[1])) : nil })
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: statsPath)
    }
}
