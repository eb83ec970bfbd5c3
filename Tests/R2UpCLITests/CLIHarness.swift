import Foundation

/// Runs the built `r2up` binary, the way a user or cron would.
enum CLI {
    /// The binary beside the test bundle in the build folder.
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test runner may live inside an .xctest bundle folder.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("r2up").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("r2up").path
    }

    struct Run: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Waits on a thread of its own, not on the cooperative pool (two threads on two cores),
    /// where a blocked test would stall every other test's awaits and timings.
    /// `input`, if given, is piped to stdin (and then closed); else stdin is /dev/null.
    static func run(_ arguments: [String], environment: [String: String], input: String? = nil) async throws -> Run {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(arguments, environment: environment, input: input) })
            }
        }
    }

    /// The same, blocking the calling thread: only for code already off the cooperative pool.
    static func runBlocking(_ arguments: [String], environment: [String: String], input: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = input.map { _ in Pipe() }
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
        if let stdin, let input {
            // Small answers: they fit the pipe's buffer, so writing before reading cannot block.
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        // Drain stdout on another thread while this one drains stderr, or a full pipe blocks the child.
        let box = DataBox()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.data = out.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: box.data, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    private final class DataBox: @unchecked Sendable { var data = Data() }

    /// A clean environment with only what r2up should read: no stray AWS settings from the host.
    static func environment(server: [String: String] = [:], home: String) -> [String: String] {
        var env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"]
        for (name, value) in server { env[name] = value }
        return env
    }

    /// The test server from scripts/test.sh, as environment variables for r2up.
    static func serverEnvironment() throws -> [String: String] {
        let env = ProcessInfo.processInfo.environment
        guard let endpoint = env["R2UP_TEST_ENDPOINT"], let access = env["R2UP_TEST_ACCESS_KEY"],
            let secret = env["R2UP_TEST_SECRET_KEY"], let bucket = env["R2UP_TEST_BUCKET"]
        else {
            throw HarnessError("no test server: run the tests with scripts/test.sh, which starts SeaweedFS")
        }
        return [
            "R2UP_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret,
            "R2UP_BUCKET": bucket, "R2UP_PUBLIC_URL": env["R2UP_TEST_PUBLIC_URL"] ?? "\(endpoint)/\(bucket)",
        ]
    }

    /// The same server as an identity without Admin rights (SeaweedFS creates missing buckets for admins).
    static func writerEnvironment() throws -> [String: String] {
        var env = try serverEnvironment()
        let process = ProcessInfo.processInfo.environment
        env["AWS_ACCESS_KEY_ID"] = process["R2UP_TEST_WRITER_ACCESS_KEY"] ?? "r2upwriterkey"
        env["AWS_SECRET_ACCESS_KEY"] = process["R2UP_TEST_WRITER_SECRET_KEY"] ?? "r2upwritersecret-0123456789abcdef"
        return env
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A temporary folder, removed at the end of the test.
struct TemporaryFolder: ~Copyable {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/r2up-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String) -> String {
        let full = path + "/" + name
        _ = FileManager.default.createFile(atPath: full, contents: Data(text.utf8))
        return full
    }
}
