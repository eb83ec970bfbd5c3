import Foundation
import Testing

/// Issue 29 item 9: pull like push. `pull KEY FILE` names the file, `pull KEY -` and `cat KEY`
/// write to stdout, and Ctrl-C or SIGTERM ends a pull with one line and 130 or 143.
@Suite("r2up pull: file names, stdout, signals")
struct PullOutputTests {
    @Test("pull KEY FILE writes that file; pull KEY - and cat KEY write the bytes to stdout; a prefix to - is bad input")
    func fileAndStdout() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-file")
        let source = folder.path + "/source.bin"
        try await PullFixtures.randomFile(source, bytes: 3 << 20)
        try await PullFixtures.put([(prefix + "A/01 Tide.m4a", .file(source))])
        let env = try PullFixtures.env(folder)

        let named = folder.path + "/out/tide.m4a"
        let run = try await CLI.run(PullFixtures.pull([prefix + "A/01 Tide.m4a", named], folder), environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout == named + "\n")
        #expect(try PullFixtures.files(under: folder.path + "/out") == ["tide.m4a"])
        #expect(try await PullFixtures.sha256(named) == (try await PullFixtures.sha256(source)))

        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        for arguments in [PullFixtures.pull([prefix + "A/01 Tide.m4a", "-"], folder), ["cat", prefix + "A/01 Tide.m4a"]] {
            let out = try await Self.bytes(arguments, environment: env)
            #expect(out.status == 0, "\(arguments): \(out.stderr)")
            #expect(out.stdout == original, "\(arguments): \(out.stdout.count) bytes")
            #expect(out.stderr.isEmpty, "\(arguments): \(out.stderr)")
        }

        let folderToStdout = try await CLI.run(PullFixtures.pull([prefix + "A/", "-"], folder), environment: env)
        #expect(folderToStdout.status == 2)
        #expect(folderToStdout.stderr == "r2up: pull \(prefix)A/ -: only one object can go to standard output, and this names a folder\n")
    }

    @Test("a folder that cannot be written (as nobody): an up-to-date copy there is skipped (exit 0), a writable subfolder takes its files, and nothing to land is one line, exit 2")
    func readOnlyDestination() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-read-only")
        try await PullFixtures.put([(prefix + "A/one.m4a", .text("one")), (prefix + "A/two.m4a", .text("two"))])
        let env = try PullFixtures.env(folder)
        let out = folder.path + "/out"
        try FileManager.default.createDirectory(atPath: out + "/A", withIntermediateDirectories: true)
        #expect(try await CLI.run(PullFixtures.pull([prefix, out], folder), environment: env).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: folder.path + "/db.sqlite" + suffix) {
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: folder.path + "/db.sqlite" + suffix)
        }
        func pullAsNobody(_ target: String) async throws -> CLI.Run {
            try await ProcessRunner.r2up(PullFixtures.pull([prefix, target], folder), environment: env, unprivileged: true)
        }
        // The copies are there and up to date: nothing needs writing.
        for path in [out, out + "/A"] { try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: path) }
        let skipped = try await pullAsNobody(out)
        #expect(skipped.status == 0 && skipped.stderr.contains("2 identical skipped"), "\(skipped)")
        // A file missing from a writable subfolder of the read-only folder: it lands there.
        try FileManager.default.removeItem(atPath: out + "/A/one.m4a")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: out + "/A")
        let landed = try await pullAsNobody(out)
        #expect(landed.status == 0, "\(landed)")
        #expect(PullFixtures.text(out + "/A/one.m4a") == "one")
        // Nothing there yet and the folder read-only: one line for the folder, nothing written.
        let empty = folder.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: empty)
        let refused = try await pullAsNobody(empty)
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr == "r2up: \(empty): cannot write in the folder: Permission denied; give a folder you can write to\n")
    }

    @Test("cat KEY into a reader that went away (| head -c) ends quietly with exit 141, like every command")
    func closedReader() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("cat-closed")
        let source = folder.path + "/source.bin"
        try await PullFixtures.randomFile(source, bytes: 3 << 20)
        try await PullFixtures.put([(prefix + "01 Tide.m4a", .file(source))])
        let env = try PullFixtures.env(folder)
        let run = try await HardeningCommandTests.runWithClosedStdout(["cat", prefix + "01 Tide.m4a"], environment: env)
        #expect(run.status == 141, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty, "stderr: \(run.stderr)")
    }

    @Test("Ctrl-C and SIGTERM end a pull with one line saying what is left, exit 130 and 143; the same pull finishes it",
          arguments: [SIGINT, SIGTERM])
    func interrupted(signal: Int32) async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-signal")
        var objects: [(String, PullFixtures.Body)] = []
        for index in 1...3 {
            let path = folder.path + "/s\(index).bin"
            try await PullFixtures.randomFile(path, bytes: 2 << 20)
            objects.append((prefix + "t\(index).bin", .file(path)))
        }
        try await PullFixtures.put(objects)
        let env = try PullFixtures.env(folder)
        let dest = folder.path + "/dest/"
        // 1 MB/s, one at a time: six seconds in all, stopped after one.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = PullFixtures.pull([prefix, dest, "--bwlimit", "1M", "--concurrency", "1"], folder)
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        try await Task.sleep(for: .milliseconds(1500))
        kill(process.processIdentifier, signal)
        let (status, stderr) = try await ProcessRunner.offThePool {
            _ = out.fileHandleForReading.readDataToEndOfFile()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        #expect(status == 128 + signal, "stderr: \(stderr)")
        let lines = stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(stderr)")
        #expect(lines.first?.hasPrefix("r2up: interrupted; ") == true && stderr.contains("left to resume: run the same pull again"), "\(stderr)")

        let again = try await CLI.run(PullFixtures.pull([prefix, dest], folder), environment: env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(try PullFixtures.files(under: dest) == ["t1.bin", "t2.bin", "t3.bin"])
        for index in 1...3 {
            #expect(try await PullFixtures.sha256(dest + "t\(index).bin") == (try await PullFixtures.sha256(folder.path + "/s\(index).bin")))
        }
    }

    /// Runs r2up and keeps stdout as bytes.
    static func bytes(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, stdout: Data, stderr: String) {
        try await ProcessRunner.offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let box = ErrorBox()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                box.data = err.fileHandleForReading.readDataToEndOfFile()
                done.signal()
            }
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            done.wait()
            process.waitUntilExit()
            return (process.terminationStatus, stdout, String(decoding: box.data, as: UTF8.self))
        }
    }

    private final class ErrorBox: @unchecked Sendable { var data = Data() }
}
