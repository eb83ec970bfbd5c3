public import Foundation

/// Runs a program to completion, draining stdout and stderr concurrently (a full pipe would block it).
public enum Subprocess {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }

        public init(status: Int32, stdout: Data, stderr: Data) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// Waits on a thread of its own: tests run on the small cooperative pool (two threads on two
    /// cores), and a test blocked there stalls every other test's awaits, timings and timeouts.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil,
        currentDirectory: String? = nil
    ) async throws -> Result {
        try await offThePool {
            try runBlocking(
                executable, arguments, environment: environment, stdin: stdin, currentDirectory: currentDirectory)
        }
    }

    private static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]?, stdin: Data?,
        currentDirectory: String?
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        let collector = PipeCollector()
        let group = DispatchGroup()
        for (pipe, isOut) in [(out, true), (err, false)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collector.set(data, isOut: isOut)
                group.leave()
            }
        }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: collector.out, stderr: collector.err)
    }

    private final class PipeCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var storedOut = Data()
        private var storedErr = Data()
        public func set(_ data: Data, isOut: Bool) {
            lock.lock()
            if isOut { storedOut = data } else { storedErr = data }
            lock.unlock()
        }
        public var out: Data { lock.lock(); defer { lock.unlock() }; return storedOut }
        public var err: Data { lock.lock(); defer { lock.unlock() }; return storedErr }
    }
}

/// Runs blocking work (waiting for a child process, reading a pipe) on a new thread and awaits it.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

/// The first line a helper server prints ("PORT 12345"), read off the cooperative pool.
public func firstLine(of pipe: Pipe) async throws -> String {
    let reader = pipe.fileHandleForReading
    return try await offThePool {
        var line = Data()
        while true {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }
}
