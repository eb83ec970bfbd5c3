import Foundation
import Testing

/// Issue 29 item 8: a paced push costs about what an unlimited one does.
@Suite("--bwlimit CPU", .serialized)
struct BandwidthLimitTests {
    /// User + system CPU seconds of one r2up run, as /usr/bin/time measures it.
    static func cpuSeconds(_ arguments: [String], environment: [String: String], folder: String) async throws -> Double {
        let report = folder + "/time-\(UUID().uuidString).txt"
        let status = try await ProcessRunner.offThePool { () -> Int32 in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-f", "%U %S", "-o", report, CLI.binary] + arguments
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0, "r2up \(arguments) exited \(status)")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        guard numbers.count == 2 else { throw HarnessError("no CPU times in '\(text)'") }
        return numbers[0] + numbers[1]
    }

    @Test("--bwlimit 10M push of 60 MB: client CPU within 2× of the unlimited push")
    func pacedCPU() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let file = folder.path + "/big.bin"
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        let output = try #require(FileHandle(forWritingAtPath: file))
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        for _ in 0..<60 { try output.write(contentsOf: random.readData(ofLength: 1_000_000)) }
        try output.close()
        try random.close()
        let scope = "tests/bwlimit-\(UUID().uuidString.prefix(8))/"
        func push(_ extra: [String]) async throws -> Double {
            try await Self.cpuSeconds(
                ["push", file, "--key", scope + UUID().uuidString + ".bin", "--db", folder.path + "/db-\(UUID().uuidString).sqlite"] + extra,
                environment: env, folder: folder.path)
        }
        // The better of two runs each: other tests share the two cores.
        let unlimited = min(try await push([]), try await push([]))
        let paced = min(try await push(["--bwlimit", "10M"]), try await push(["--bwlimit", "10M"]))
        #expect(paced <= 2 * unlimited, "paced \(paced) s of CPU, unlimited \(unlimited) s")
        _ = try await CLI.run(["rm", "--prefix", scope, "--yes", "--db", folder.path + "/rm.sqlite"], environment: env)
    }
}
