import Foundation
import Testing
import R2UpTestSupport

/// An interrupted `r2up pull` (SIGKILL of the real process) resumes from the parts verified on disk.
/// One test at a time: each moves hundreds of MiB, and other suites' timings share the two cores.
@Suite("r2up pull resume", .serialized)
struct PullResumeTests {
    @Test("a 200 MiB pull killed mid-way resumes: only missing or damaged parts are fetched again, bytes match")
    func killAndResume() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-kill")
        let source = folder.path + "/source.bin"
        try await PullFixtures.randomFile(source, bytes: 200 << 20)
        try await PullFixtures.put([(prefix + "big.bin", .file(source))])
        let env = try PullFixtures.env(folder)
        let dest = folder.path + "/dest"
        let record = dest + "/.big.bin.r2up-resume"
        let partial = dest + "/.big.bin.r2up-part"

        // 20 MB/s: ten seconds for the whole object, time enough to stop it part-way.
        let victim = try PullProcess(PullFixtures.pull([prefix + "big.bin", dest, "--bwlimit", "20M"], folder), environment: env)
        var finished = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            finished = ResumeFile.finishedParts(record).count
            if finished >= 3 || !victim.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        victim.kill()
        let status = try await victim.wait()
        #expect(status == SIGKILL, "r2up ended on its own before it was killed (\(finished) parts recorded)")
        #expect(finished >= 3)
        #expect(!FileManager.default.fileExists(atPath: dest + "/big.bin"), "no torn file under the final name")
        #expect(FileManager.default.fileExists(atPath: partial))

        // Damage a recorded part on disk: the resume must notice (CRC) and fetch it again.
        let parts = ResumeFile.finishedParts(record).sorted()
        let damaged = try #require(parts.first)
        let handle = try #require(FileHandle(forUpdatingAtPath: partial))
        try handle.seek(toOffset: UInt64(damaged) * (8 << 20) + 100)
        try handle.write(contentsOf: Data([0xA5, 0x5A, 0xA5]))
        try handle.close()

        let rerun = try await CLI.run(PullFixtures.pull([prefix + "big.bin", dest, "--json"], folder), environment: env)
        #expect(rerun.status == 0, "stderr: \(rerun.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(rerun.stdout.utf8)) as? [[String: Any]])
        let resumed = try #require(rows.first?["resumedBytes"] as? Int)
        #expect(resumed == (parts.count - 1) * (8 << 20), "resumed \(resumed) bytes of \(parts.count) recorded parts, one damaged")
        #expect(try await PullFixtures.sha256(dest + "/big.bin") == (try await PullFixtures.sha256(source)))
        #expect(try PullFixtures.files(under: dest) == ["big.bin"], "temporary file and record removed")
    }

    @Test("a resume record for an object since replaced is dropped: the new object is fetched whole")
    func changedObjectRestarts() async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("pull-changed")
        let first = folder.path + "/first.bin"
        let second = folder.path + "/second.bin"
        try await PullFixtures.randomFile(first, bytes: 24 << 20)
        try await PullFixtures.randomFile(second, bytes: 24 << 20)
        try await PullFixtures.put([(prefix + "track.bin", .file(first))])
        let env = try PullFixtures.env(folder)
        let dest = folder.path + "/dest"
        let record = dest + "/.track.bin.r2up-resume"

        let victim = try PullProcess(PullFixtures.pull([prefix + "track.bin", dest, "--bwlimit", "4M", "--concurrency", "1"], folder), environment: env)
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline, ResumeFile.finishedParts(record).count < 1, victim.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
        victim.kill()
        #expect(try await victim.wait() == SIGKILL)
        #expect(!ResumeFile.finishedParts(record).isEmpty)

        try await PullFixtures.put([(prefix + "track.bin", .file(second))])
        let rerun = try await CLI.run(PullFixtures.pull([prefix + "track.bin", dest, "--json"], folder), environment: env)
        #expect(rerun.status == 0, "stderr: \(rerun.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(rerun.stdout.utf8)) as? [[String: Any]])
        #expect(rows.first?["resumedBytes"] as? Int == 0)
        #expect(try await PullFixtures.sha256(dest + "/track.bin") == (try await PullFixtures.sha256(second)))
    }
}

/// Reads the resume record r2up keeps next to a partial download.
enum ResumeFile {
    static func finishedParts(_ path: String) -> [Int] {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [] }
        // JSONEncoder writes [Int: UInt32] as a flat [key, value, key, value...] array.
        if let flat = object["parts"] as? [Int] { return stride(from: 0, to: flat.count, by: 2).map { flat[$0] } }
        if let keyed = object["parts"] as? [String: Any] { return keyed.keys.compactMap { Int($0) } }
        return []
    }
}

/// A real r2up process the test can SIGKILL; its output is discarded.
final class PullProcess: @unchecked Sendable {
    private let process = Process()

    init(_ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// Ctrl-C.
    func interrupt() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGINT) }
    }

    /// The signal that ended it, or its exit status; waited for off the cooperative pool.
    func wait() async throws -> Int32 {
        let process = self.process
        return try await ProcessRunner.offThePool {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}
