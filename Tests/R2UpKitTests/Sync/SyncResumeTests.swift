import Foundation
import Testing
import R2UpModel
import R2UpTransfer
@testable import R2UpStore
import R2UpTestSupport

/// A sync killed in the middle of a multipart upload is continued by the next sync.
@Suite("Sync resumes")
struct SyncResumeTests {
    @Test("SIGKILL mid-multipart: the next sync completes the file without re-sending a recorded part")
    func killAndResume() async throws {
        let server = try TestServer.require()
        let prefix = server.scratchPrefix("sync-resume")
        let directory = try TestDirectory()
        let file = try directory.makeFile("library/Long Set/live mix.flac", size: 40 << 20, seed: 404)
        let database = directory.path + "/r2up.sqlite"
        var environment = server.environment
        environment["HOME"] = directory.path
        let arguments = [
            "sync", directory.path + "/library", "--prefix", prefix, "--min-age", "0", "--db", database,
            "--part-size", "5M", "--multipart-threshold", "5M",
        ]

        let first = Process()
        first.executableURL = URL(fileURLWithPath: R2UpBinary.path)
        first.arguments = arguments + ["--bwlimit", "2M", "--concurrency", "2"]
        first.environment = environment
        let firstLog = directory.path + "/first-run.log"
        _ = FileManager.default.createFile(atPath: firstLog, contents: nil)
        first.standardOutput = FileHandle(forWritingAtPath: firstLog)
        first.standardError = FileHandle(forWritingAtPath: firstLog)
        try first.run()
        // Polled on a thread of its own: a busy cooperative pool must not let the upload finish unseen.
        var recorded = try await offThePool { () -> Set<Int> in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && first.isRunning {
                if FileManager.default.fileExists(atPath: database), let store = try? Store(path: database),
                    let job = try? store.jobs(in: [.uploading]).first, let parts = try? store.parts(jobID: job.id),
                    parts.count >= 2
                {
                    // Killed from this thread: a resumption on a busy pool came after the sync had ended.
                    kill(first.processIdentifier, SIGKILL)
                    return Set(parts.map(\.partNumber))
                }
                usleep(50_000)
            }
            return []
        }
        kill(first.processIdentifier, SIGKILL)
        try await offThePool { first.waitUntilExit() }
        let firstOutput = (try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? ""
        #expect(first.terminationReason == .uncaughtSignal, "the first sync ended by itself: \(firstOutput)")
        #expect(recorded.count >= 2, "no parts were recorded before the kill: \(firstOutput)")
        let store = try Store(path: database)
        let job = try #require(try store.jobs(in: [.uploading]).first)
        recorded = Set(try store.parts(jobID: job.id).map(\.partNumber))

        // The next sync, through a logging proxy: which parts does it send?
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let second = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(second.status == 0, "stderr: \(second.stderrText)")
        #expect(second.stdoutText.hasPrefix("sync: 1 uploaded (40 MB), 0 failed"), "\(second.stdoutText)")
        let sentParts = proxy.injectedFaults(includingClean: true).compactMap { entry -> Int? in
            guard entry["method"] as? String == "PUT", let target = entry["target"] as? String,
                let range = target.range(of: "partNumber=")
            else { return nil }
            return Int(target[range.upperBound...].prefix(while: \.isNumber))
        }
        #expect(!sentParts.isEmpty)
        #expect(Set(sentParts).isDisjoint(with: recorded), "re-sent recorded parts: \(Set(sentParts).intersection(recorded))")

        let key = prefix + "Long Set/live mix.flac"
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == file.sha256)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: prefix, server: server).isEmpty)
        #expect(try Store(path: database).recentUploads(limit: 10).map(\.r2Key) == [key])
    }
}
