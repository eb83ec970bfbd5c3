import Foundation
import Synchronization
import Testing

/// `r2up sync` as cron runs it: the built binary, its output and exit codes, and two processes racing.
@Suite("r2up sync")
struct SyncCommandTests {
    func library(_ folder: borrowing TemporaryFolder) throws -> String {
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library + "/Album One", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: library + "/Album One/01 Intro.m4a", contents: Data("intro".utf8))
        _ = FileManager.default.createFile(atPath: library + "/Album One/02 Outro.flac", contents: Data("outro!".utf8))
        return library
    }

    func prefix(_ label: String) -> String { "tests/cli-\(label)-\(UInt32.random(in: 0...UInt32.max))/" }

    @Test("one summary line off a terminal, nothing animated; --json gives the same; a no-op run makes no request")
    func summaryLine() async throws {
        let folder = try TemporaryFolder()
        let library = try library(folder)
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let args = ["sync", library, "--prefix", prefix("line"), "--min-age", "0", "--db", folder.path + "/db.sqlite"]
        let first = try await CLI.run(args, environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stderr.isEmpty)
        #expect(first.stdout.range(of: #"^sync: 2 uploaded \(11 bytes\), 0 failed, 0 unchanged, 0 waiting \(still being written\) in \d+\.\d s\n$"#, options: .regularExpression) != nil, "\(first.stdout)")

        let second = try await CLI.run(args + ["--json"], environment: env)
        #expect(second.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any])
        #expect(object["uploaded"] as? Int == 0 && object["unchanged"] as? Int == 2 && object["failed"] as? Int == 0)
        #expect((object["failures"] as? [Any])?.isEmpty == true)

        let quiet = try await CLI.run(args + ["--quiet"], environment: env)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)

        // Zero requests for unchanged files: with nothing listening at the endpoint it still succeeds.
        var offline = try CLI.serverEnvironment()
        offline["R2UP_ENDPOINT"] = "http://127.0.0.1:9"
        let noNetwork = try await CLI.run(args, environment: CLI.environment(server: offline, home: folder.path))
        #expect(noNetwork.status == 0, "stderr: \(noNetwork.stderr)")
        #expect(noNetwork.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 2 unchanged"))
    }

    @Test("failures: exit 1, each named on stderr and listed by --json")
    func failures() async throws {
        let folder = try TemporaryFolder()
        let library = try library(folder)
        var server = try CLI.serverEnvironment()
        // Every PUT answered 500/503/429 by the fault proxy (the listing passes): each file fails on its own.
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--error-rate", "1.0",
             "--only-methods", "PUT", "--max-seconds", "300"])
        defer { proxy.stop() }
        server["R2UP_ENDPOINT"] = proxy.endpoint
        let env = CLI.environment(server: server, home: folder.path)
        let run = try await CLI.run(
            ["sync", library, "--min-age", "0", "--json", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 1, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let failures = try #require(object["failures"] as? [[String: Any]])
        #expect(failures.map { $0["key"] as? String } == ["Album One/01 Intro.m4a", "Album One/02 Outro.flac"])
        #expect((failures.first?["error"] as? String)?.contains("(HTTP 5") == true || (failures.first?["error"] as? String)?.contains("(HTTP 429") == true,
                "\(failures)")

        // A second run honours the failed jobs' next attempt: nothing sent, the summary says when,
        // in local time with its zone (issue 29 item 8), as `queue` says it.
        var tokyo = env
        tokyo["TZ"] = "Asia/Tokyo"
        let text = try await CLI.run(["sync", library, "--min-age", "0", "--db", folder.path + "/db.sqlite"], environment: tokyo)
        #expect(text.status == 0)
        #expect(text.stderr.isEmpty, "\(text.stderr)")
        #expect(text.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 0 unchanged, 0 waiting (still being written), 2 to retry later from "), "\(text.stdout)")
        let zoned = #/from \d{4}-\d{2}-\d{2} \d{2}:\d{2} \+09:00 in /#
        #expect(text.stdout.contains(zoned), "\(text.stdout)")
        let queue = try await CLI.run(["queue", "--db", folder.path + "/db.sqlite"], environment: tokyo)
        #expect(queue.stdout.contains(#/next attempt \d{4}-\d{2}-\d{2} \d{2}:\d{2} \+09:00/#), "\(queue.stdout)")
        let utc = try await CLI.run(["queue", "--db", folder.path + "/db.sqlite"], environment: env.merging(["TZ": "UTC"]) { $1 })
        #expect(utc.stdout.contains(#/next attempt \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/#), "\(utc.stdout)")
    }

    @Test("a server that is not running stops a sync at once: one line, exit 3, nothing failed (issue 29 item 6)")
    func serverDown() async throws {
        let folder = try TemporaryFolder()
        let library = try library(folder)
        var server = try CLI.serverEnvironment()
        server["R2UP_ENDPOINT"] = "http://127.0.0.1:9"  // discard port: nothing listens
        let env = CLI.environment(server: server, home: folder.path)
        let run = try await CLI.run(["sync", library, "--min-age", "0", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("r2up: the endpoint refused the connection") && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        let queue = try await CLI.run(["queue", "--json", "--db", folder.path + "/db.sqlite"], environment: env)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any])
        #expect((report["counts"] as? [String: Int])?["failed"] == 0, "\(queue.stdout)")
    }

    @Test("bad input: a missing folder or a bad --min-age is one line and exit 2")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let missing = try await CLI.run(["sync", folder.path + "/nope", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(missing.status == 2)
        #expect(missing.stderr == "r2up: \(folder.path)/nope: no such folder; give the folder to sync\n")
        let age = try await CLI.run(["sync", folder.path, "--min-age", "soon", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(age.status == 2)
        #expect(age.stderr.contains("--min-age 'soon' is not a duration like 10s, 2m or 1h"))
    }

    @Test("two real processes: the second exits 4 at once naming the first's pid, --wait waits; a killed holder never blocks")
    func lockRace() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        // 4 MB at 250 KB/s: about sixteen seconds of upload to race against, however loaded the machine.
        _ = FileManager.default.createFile(atPath: library + "/big.flac", contents: Data(repeating: 7, count: 4_000_000))
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let db = folder.path + "/db.sqlite"
        let args = ["sync", library, "--prefix", prefix("lock"), "--min-age", "0", "--db", db]

        let slow = Task { try await CLI.run(args + ["--bwlimit", "250K"], environment: env) }
        guard let holder = try await lockHolder(db: db, until: slow) else {
            let run = try await slow.value
            Issue.record("the first sync never held the lock: exit \(run.status), \(run.stdout) \(run.stderr)")
            return
        }
        let second = try await CLI.run(args, environment: env)
        #expect(second.status == 4)
        #expect(second.stderr == "r2up: another r2up sync (pid \(holder)) is running; use --wait to wait for it\n")
        #expect(second.stdout.isEmpty)
        let waited = try await CLI.run(args + ["--wait"], environment: env)
        let first = try await slow.value
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(first.stdout.hasPrefix("sync: 1 uploaded (3.8 MB)"), "\(first.stdout)")
        #expect(waited.status == 0)
        #expect(waited.stdout.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 1 unchanged"), "\(waited.stdout)")

        // A holder killed mid-upload: the kernel drops its flock, and the next run finishes the job.
        _ = FileManager.default.createFile(atPath: library + "/big.flac", contents: Data(repeating: 8, count: 4_000_000))
        let doomed = Task { try await CLI.run(args + ["--bwlimit", "250K"], environment: env) }
        guard let victim = try await lockHolder(db: db, until: doomed) else {
            let run = try await doomed.value
            Issue.record("the second slow sync never held the lock: exit \(run.status), \(run.stdout) \(run.stderr)")
            return
        }
        kill(victim, SIGKILL)
        let killed = try await doomed.value
        #expect(killed.status != 0)
        let next = try await CLI.run(args, environment: env)
        #expect(next.status == 0, "stderr: \(next.stderr)")
        #expect(next.stdout.hasPrefix("sync: 1 uploaded (3.8 MB)"), "\(next.stdout)")
    }

    /// The pid of the process holding the sync lock, polled on a thread of its own (a busy
    /// cooperative pool must not make it miss the holder); nil when `run` ended first or a minute passed.
    func lockHolder(db: String, until run: Task<CLI.Run, any Error>) async throws -> Int32? {
        let path = db + ".sync-lock"
        let finished = Flag()
        let watcher = Task {
            _ = try? await run.value
            finished.value.withLock { $0 = true }
        }
        defer { watcher.cancel() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline && !finished.value.withLock({ $0 }) {
                    let fd = open(path, O_RDONLY | O_CLOEXEC)
                    if fd >= 0 {
                        // Held by someone else when our own non-blocking flock is refused.
                        let held = flock(fd, LOCK_SH | LOCK_NB) != 0
                        if !held { flock(fd, LOCK_UN) }
                        close(fd)
                        if held, let text = try? String(contentsOfFile: path, encoding: .utf8),
                            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), kill(pid, 0) == 0
                        {
                            continuation.resume(returning: pid)
                            return
                        }
                    }
                    usleep(10_000)
                }
                continuation.resume(returning: nil)
            }
        }
    }
}

/// A flag shared by a task and a thread.
final class Flag: Sendable {
    let value = Mutex(false)
}
