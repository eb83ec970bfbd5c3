import Foundation
import Testing
import R2UpTestSupport

/// `r2up queue` and `r2up retry`, and two processes sharing one database.
@Suite("r2up queue and retry")
struct QueueCommandTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("a failed push shows in the queue with its reason; retry --all uploads it")
    func failedThenRetried() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("Late Night.m4a", "bytes of a track")
        let db = folder.path + "/db.sqlite"
        var server = try CLI.serverEnvironment()
        let good = CLI.environment(server: server, home: folder.path)
        server["R2UP_ENDPOINT"] = "http://127.0.0.1:9"  // discard port: nothing listens
        let refused = CLI.environment(server: server, home: folder.path)

        let push = try await CLI.run(["push", track, "--prefix", "queue-tests", "--db", db], environment: refused)
        #expect(push.status == 1)
        #expect(push.stderr.contains("the endpoint refused the connection"))

        let queue = try await CLI.run(["queue", "--db", db], environment: good)
        #expect(queue.status == 0)
        #expect(queue.stdout.hasPrefix("0 queued · 0 uploading · 1 failed — last error: "))
        #expect(queue.stdout.contains("⚠ queue-tests/Late Night.m4a ("))
        let report = try json(try await CLI.run(["queue", "--json", "--db", db], environment: good).stdout)
        #expect((report["counts"] as? [String: Int]) == ["queued": 0, "uploading": 0, "interrupted": 0, "failed": 1])
        let failed = try #require(report["failed"] as? [[String: Any]])
        #expect(failed.first?["key"] as? String == "queue-tests/Late Night.m4a")
        #expect(failed.first?["state"] as? String == "failedRetryable")

        let retry = try await CLI.run(["retry", "--all", "--db", db], environment: good)
        #expect(retry.status == 0, "stderr: \(retry.stderr)")
        #expect(retry.stdout.hasSuffix("/queue-tests/Late%20Night.m4a\n"))
        let after = try json(try await CLI.run(["queue", "--json", "--db", db], environment: good).stdout)
        #expect((after["counts"] as? [String: Int]) == ["queued": 0, "uploading": 0, "interrupted": 0, "failed": 0])
        #expect((after["lastCompleted"] as? [String: Any])?["r2Key"] as? String == "queue-tests/Late Night.m4a")
    }

    @Test("retry of an unknown id is bad input (exit 2)")
    func unknownID() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let run = try await CLI.run(["retry", "deadbeef", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 2)
        #expect(run.stderr == "r2up: no failed or interrupted upload has the id 'deadbeef'; see r2up queue\n")
    }

    @Test("queue in one process while push writes in another: live progress, never 'database is locked'")
    func twoProcesses() async throws {
        let folder = try TemporaryFolder()
        let db = folder.path + "/db.sqlite"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let big = folder.path + "/album"
        try FileManager.default.createDirectory(atPath: big, withIntermediateDirectories: true)
        for index in 1...3 {
            _ = FileManager.default.createFile(
                atPath: big + "/\(index).flac", contents: Data(repeating: UInt8(index), count: 12 << 20))
        }
        // About 36 s of uploading at 1 MiB/s: many progress writes, and time for a few polls even
        // when the whole suite's processes share two cores (a poll then took up to 20 s on CI).
        let pusher = Process()
        pusher.executableURL = URL(fileURLWithPath: CLI.binary)
        pusher.arguments = ["push", big, "--prefix", "two-proc", "--db", db, "--bwlimit", "1M", "--concurrency", "2"]
        pusher.environment = env
        pusher.standardOutput = FileHandle.nullDevice
        pusher.standardError = FileHandle.nullDevice
        try pusher.run()
        // Polled on a thread of its own: at the start of the whole suite the cooperative pool can be
        // busy for longer than the push takes, and a poll waiting for it would see nothing.
        let (sawProgress, errors, seen) = try await ProcessRunner.offThePool { () -> (Bool, [String], [String]) in
            var sawProgress = false
            var errors: [String] = []
            var seen: [String] = []
            while pusher.isRunning {
                let run = try CLI.runBlocking(["queue", "--json", "--db", db], environment: env)
                seen.append(run.stdout)
                if run.status != 0 { errors.append(run.stderr) }
                // Plain JSONSerialization: #require has no test to report to on this thread.
                if let report = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
                    let uploading = report["uploading"] as? [[String: Any]],
                    uploading.contains(where: { ($0["bytesSent"] as? Int ?? 0) > 0 })
                {
                    sawProgress = true
                }
                let history = try CLI.runBlocking(["queue", "--db", db], environment: env)
                if history.status != 0 { errors.append(history.stderr) }
                usleep(200_000)
            }
            pusher.waitUntilExit()
            return (sawProgress, errors, seen)
        }
        #expect(pusher.terminationStatus == 0)
        #expect(errors.isEmpty, "\(errors)")
        #expect(!errors.joined().contains("locked"))
        #expect(sawProgress, "queue never showed bytes sent while push ran: \(seen)")
    }
}
