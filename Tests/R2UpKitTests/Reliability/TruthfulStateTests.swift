import Foundation
import GRDB
import Testing
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// What r2up shows is what is true: the state machine drives every upload, a killed run is
/// interrupted (never uploading forever), a failure of the whole run stops it with one line,
/// Ctrl-C leaves everything resumable, and a busy database never stops the bytes.
/// Each test runs the built binary against the real server, as a user would.
@Suite("Truthful state", .serialized)
struct TruthfulStateTests {
    /// One r2up run started in the background.
    final class Run: @unchecked Sendable {
        let process = Process()
        init(_ arguments: [String], environment: [String: String]) throws {
            process.executableURL = URL(fileURLWithPath: R2UpBinary.path)
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = Pipe()
            process.standardError = Pipe()
            try process.run()
        }

        /// Waits (off the cooperative pool) and returns its exit status and stderr.
        func finish() async throws -> (status: Int32, stderr: String) {
            try await offThePool {
                let errors = (self.process.standardError as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
                _ = (self.process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile()
                self.process.waitUntilExit()
                return (self.process.terminationStatus, String(decoding: errors, as: UTF8.self))
            }
        }
    }

    static func r2up(_ arguments: [String], environment: [String: String]) throws -> Subprocess.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: R2UpBinary.path)
        process.arguments = arguments
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // queue's stderr is a line at most: it cannot fill its pipe while stdout is read.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Subprocess.Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// python3 holding the database's write lock (BEGIN EXCLUSIVE) for `seconds`; returns once it holds it.
    static func holdWriteLock(_ database: String, seconds: Int) throws -> Process {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = [
            "python3", "-c",
            "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('LOCKED', flush=True); time.sleep(int(sys.argv[2])); c.execute('COMMIT')",
            database, String(seconds),
        ]
        let out = Pipe()
        python.standardOutput = out
        try python.run()
        _ = out.fileHandleForReading.readData(ofLength: 6)
        return python
    }

    static func json(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// Every job entry of `r2up queue --json`, from all its lists.
    static func entries(_ report: [String: Any]) -> [[String: Any]] {
        ["uploading", "interrupted", "upNext", "failed"].flatMap { report[$0] as? [[String: Any]] ?? [] }
    }

    @Test("a paced multipart push is seen initiated, uploading and verifying from a second process, never interrupted")
    func statesSeenLive() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-live")
        let directory = try TestDirectory()
        let file = try directory.makeFile("live set.flac", size: 24 << 20, seed: 31)
        // The second POST is CompleteMultipartUpload: held 3 s, the job is verifying meanwhile.
        let proxy = try await FaultProxy(server: server, arguments: ["--only-methods", "POST", "--script", "2=stall", "--stall-seconds", "3"])
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let push = try Run(
            ["push", file.path, "--prefix", scope, "--db", database, "--bwlimit", "8M", "--concurrency", "2"],
            environment: environment)
        let env = environment
        let seen = try await offThePool { () -> [String] in
            var states: [String] = []
            while push.process.isRunning {
                let run = try Self.r2up(["queue", "--json", "--db", database], environment: env)
                let report = Self.json(run.stdout)
                for entry in Self.entries(report) {
                    let list = (report["interrupted"] as? [[String: Any]] ?? []).contains { $0["id"] as? String == entry["id"] as? String }
                    states.append(list ? "interrupted" : entry["state"] as? String ?? "?")
                }
                usleep(100_000)
            }
            return states
        }
        let end = try await push.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(Set(seen).isSuperset(of: ["initiated", "uploading", "verifying"]), "\(Set(seen))")
        #expect(!seen.contains("interrupted"), "a live upload was shown interrupted")
        let stored = try await IndependentClient.fetch([scope + "live set.flac"], bucket: server.bucket, server: server)
        #expect(stored[scope + "live set.flac"]?.sha256 == file.sha256)
    }

    @Test("SIGKILL mid-push: within 5 s queue and status say interrupted, not uploading; the next push resumes, sending no recorded part")
    func killedPushIsInterrupted() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-kill")
        let directory = try TestDirectory()
        let file = try directory.makeFile("long take.wav", size: 40 << 20, seed: 32)
        let key = scope + "long take.wav"
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let arguments = ["push", file.path, "--prefix", scope, "--db", database, "--bwlimit", "8M", "--concurrency", "2"]
        let push = try Run(arguments, environment: environment)
        // Killed once at least one part is recorded.
        @Sendable func recorded() throws -> Set<Int> {
            guard FileManager.default.fileExists(atPath: database) else { return [] }
            return Set(try Store(path: database).rawRead { db in try Int.fetchAll(db, sql: "SELECT partNumber FROM parts") })
        }
        let partsAtKill = try await offThePool { () -> Set<Int> in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, push.process.isRunning, (try? recorded())?.isEmpty ?? true { usleep(50_000) }
            kill(push.process.processIdentifier, SIGKILL)
            push.process.waitUntilExit()
            return (try? recorded()) ?? []
        }
        #expect(push.process.terminationReason == .uncaughtSignal)
        #expect(!partsAtKill.isEmpty)

        // The truth within 5 s, from queue and status alike (text and JSON).
        let deadline = Date().addingTimeInterval(5)
        var report: [String: Any] = [:]
        repeat {
            report = Self.json(try await Subprocess.run(R2UpBinary.path, ["queue", "--json", "--db", database], environment: environment).stdout)
        } while (report["counts"] as? [String: Int])?["interrupted"] != 1 && Date() < deadline
        #expect(report["counts"] as? [String: Int] == ["queued": 0, "uploading": 0, "interrupted": 1, "failed": 0], "\(report)")
        // Its entry says what it is, not the dead run's last step.
        #expect((report["interrupted"] as? [[String: Any]])?.first?["state"] as? String == "interrupted", "\(report)")
        let text = try await Subprocess.run(R2UpBinary.path, ["queue", "--db", database], environment: environment)
        #expect(text.stdoutText.hasPrefix("0 queued · 0 uploading · 1 interrupted · 0 failed"), "\(text.stdoutText)")
        #expect(text.stdoutText.contains("Interrupted (resumes on the next run)"))
        let status = try await Subprocess.run(R2UpBinary.path, ["status", directory.path, "--json", "--db", database], environment: environment)
        let track = (try JSONSerialization.jsonObject(with: status.stdout) as? [[String: Any]])?.first?["tracks"] as? [[String: Any]]
        #expect(track?.first?["uploadState"] as? String == "none")
        #expect(track?.first?["interrupted"] as? Bool == true)
        let statusText = try await Subprocess.run(R2UpBinary.path, ["status", directory.path, "--db", database], environment: environment)
        #expect(statusText.stdoutText.contains("long take.wav (interrupted, resumes on the next run)"), "\(statusText.stdoutText)")

        // The same push again: resumed, no recorded part sent again, one history row.
        let logStart = proxy.injectedFaults(includingClean: true).count
        let again = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(again.status == 0, "\(again.stderrText)")
        let resent = proxy.injectedFaults(includingClean: true).dropFirst(logStart).compactMap { entry -> Int? in
            guard entry["method"] as? String == "PUT", let target = entry["target"] as? String,
                let range = target.range(of: "partNumber=")
            else { return nil }
            return Int(target[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(Set(resent).isDisjoint(with: partsAtKill), "re-sent \(resent) though \(partsAtKill) were recorded")
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == file.sha256)
        let store = try Store(path: database)
        #expect(try store.recentUploads(limit: 10).map(\.r2Key) == [key])
        #expect(try store.rawRead { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
    }

    @Test("queue cancel drops an interrupted upload and aborts its multipart upload on the server")
    func cancelInterrupted() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-cancel")
        let directory = try TestDirectory()
        let file = try directory.makeFile("draft.wav", size: 24 << 20, seed: 33)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let push = try Run(
            ["push", file.path, "--prefix", scope, "--db", database, "--bwlimit", "4M", "--concurrency", "2"],
            environment: environment)
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, push.process.isRunning {
                let ids = (try? Store(path: database).rawRead { db in try String.fetchAll(db, sql: "SELECT uploadID FROM jobs WHERE uploadID IS NOT NULL") }) ?? []
                if !ids.isEmpty { break }
                usleep(50_000)
            }
            kill(push.process.processIdentifier, SIGKILL)
            push.process.waitUntilExit()
        }
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).count == 1)
        let cancel = try await Subprocess.run(R2UpBinary.path, ["queue", "cancel", "--all", "--db", database], environment: environment)
        #expect(cancel.status == 0, "\(cancel.stderrText)")
        #expect(cancel.stdoutText == "cancelled \(scope)draft.wav\n")
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
        let report = Self.json(try await Subprocess.run(R2UpBinary.path, ["queue", "--json", "--db", database], environment: environment).stdout)
        #expect(report["counts"] as? [String: Int] == ["queued": 0, "uploading": 0, "interrupted": 0, "failed": 0])
        #expect(report["leftOnServer"] as? Int == 0)
        let nothing = try await Subprocess.run(R2UpBinary.path, ["queue", "cancel", "deadbeef", "--db", database], environment: environment)
        #expect(nothing.status == 2)
        #expect(nothing.stderrText == "r2up: no queued upload has the id 'deadbeef'; see r2up queue\n")
    }

    @Test("a wrong secret stops a sync at once: one line, exit 3, the jobs stay queued; the fixed key uploads them")
    func runLevelFailureStops() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-secret")
        let directory = try TestDirectory()
        let library = directory.path + "/library"
        var sizes: [String: Int] = [:]
        for index in 1...40 { sizes["disc/\(index).m4a"] = 1000 + index }
        _ = try await RandomFiles.write(sizes, in: library, keyPrefix: scope)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let arguments = ["sync", library, "--prefix", scope, "--db", database, "--min-age", "0"]
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789"
        for quiet in [false, true] {
            let run = try await Subprocess.run(R2UpBinary.path, arguments + (quiet ? ["--quiet"] : []), environment: wrong)
            #expect(run.status == 3)
            let lines = run.stderrText.split(separator: "\n")
            #expect(lines.count == 1, "\(run.stderrText)")
            #expect(lines.first?.hasPrefix("r2up: the secret access key is wrong") == true || lines.first?.contains("SignatureDoesNotMatch") == true, "\(run.stderrText)")
            #expect(!run.stderrText.contains("not-the-secret"))
        }
        let report = Self.json(try await Subprocess.run(R2UpBinary.path, ["queue", "--json", "--db", database], environment: environment).stdout)
        let counts = report["counts"] as? [String: Int] ?? [:]
        #expect(counts["failed"] == 0 && counts["uploading"] == 0, "\(counts)")
        #expect((counts["queued"] ?? 0) + (counts["interrupted"] ?? 0) == 40, "\(counts)")

        let fixed = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(fixed.status == 0, "\(fixed.stderrText)")
        #expect(fixed.stdoutText.hasPrefix("sync: 40 uploaded"), "\(fixed.stdoutText)")
        #expect(try Store(path: database).uploadCount() == 40)
    }

    @Test("Ctrl-C in push DIR: exit 130 and one line; the same push then finishes every file, one history row each")
    func interruptedPushResumes() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-sigint")
        let directory = try TestDirectory()
        let album = directory.path + "/album"
        var sizes: [String: Int] = [:]
        for index in 1...30 { sizes["\(index).flac"] = 200_000 + index }
        let expected = try await RandomFiles.write(sizes, in: album, keyPrefix: scope)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let arguments = ["push", album + "/", "--prefix", scope, "--db", database, "--bwlimit", "1M", "--concurrency", "2"]
        let push = try Run(arguments, environment: environment)
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, push.process.isRunning, ((try? Store(path: database).uploadCount()) ?? 0) < 3 { usleep(50_000) }
            kill(push.process.processIdentifier, SIGINT)
        }
        let end = try await push.finish()
        #expect(end.status == 130)
        #expect(end.stderr.hasPrefix("r2up: interrupted; "), "\(end.stderr)")
        #expect(end.stderr.contains("left to resume"))
        let report = Self.json(try await Subprocess.run(R2UpBinary.path, ["queue", "--json", "--db", database], environment: environment).stdout)
        #expect((report["counts"] as? [String: Int])?["uploading"] == 0)

        #expect(end.stderr.hasSuffix("left to resume: run the same command again\n"), "\(end.stderr)")

        let again = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(again.status == 0, "\(again.stderrText)")
        let keys = Array(expected.keys)
        let stored = try await IndependentClient.fetch(keys, bucket: server.bucket, server: server)
        #expect(stored.count == 30)
        let rows = try Store(path: database).recentUploads(limit: 100).map(\.r2Key)
        #expect(rows.count == 30 && Set(rows).count == 30, "\(rows.count) rows")
    }

    @Test("Ctrl-C while stored PUTs wait for their replies: the next push records those files as its own, no conflict, nothing sent twice")
    func interruptedAfterServerStored() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-lostreply")
        let directory = try TestDirectory()
        let album = directory.path + "/album"
        var sizes: [String: Int] = [:]
        for index in 1...8 { sizes["\(index).m4a"] = 9_000 + index }
        let expected = try await RandomFiles.write(sizes, in: album, keyPrefix: scope)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        // The server stores each PUT; the relay holds its reply for a minute.
        let proxy = try await FaultProxy(server: server, arguments: ["--only-methods", "PUT", "--stall-rate", "1.0", "--stall-seconds", "60"])
        var stalled = environment
        stalled["R2UP_ENDPOINT"] = proxy.endpoint
        let arguments = ["push", album + "/", "--prefix", scope, "--db", database, "--concurrency", "2"]
        let push = try Run(arguments, environment: stalled)
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, push.process.isRunning, proxy.injectedFaults().count < 2 { usleep(20_000) }
            kill(push.process.processIdentifier, SIGINT)
        }
        let end = try await push.finish()
        #expect(proxy.injectedFaults().count >= 2, "PUTs stored, their replies held")
        #expect(end.status == 130, "\(end.stderr)")
        #expect(end.stderr.hasPrefix("r2up: interrupted; 8 uploads are left to resume"), "\(end.stderr)")

        // Straight to the server: the two objects there are these files' bytes, so they are recorded.
        let again = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(again.status == 0, "\(again.stderrText)")
        #expect(again.stdoutText.split(separator: "\n").count == 8, "\(again.stdoutText)")
        let stored = try await IndependentClient.fetch(Array(expected.keys), bucket: server.bucket, server: server)
        for (key, sha256) in expected { #expect(stored[key]?.sha256 == sha256, "\(key)") }
        let rows = try Store(path: database).recentUploads(limit: 100).map(\.r2Key)
        #expect(rows.count == 8 && Set(rows).count == 8, "\(rows)")
    }

    @Test("two pushes of one folder at once: every file is uploaded once; the second names what the first is uploading (exit 4)")
    func twoPushesOfOneFolder() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-twofolders")
        let directory = try TestDirectory()
        let album = directory.path + "/album"
        var sizes: [String: Int] = [:]
        for index in 1...300 { sizes[String(format: "%03d.m4a", index)] = 12_000 + index }
        let expected = try await RandomFiles.write(sizes, in: album, keyPrefix: scope)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let arguments = ["push", album + "/", "--prefix", scope, "--db", database]
        // Paced (3.6 MB at 1 MB/s) so the first cannot finish all 300 before the second scans: on
        // a quiet machine it did, and the second had nothing to upload (a run of a different test).
        let first = try Run(arguments + ["--bwlimit", "1M"], environment: environment)
        // The second starts once the first has uploaded some: it scanned a folder whose tracks
        // the first goes on completing while the second queues them.
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, first.process.isRunning, ((try? Store(path: database).uploadCount()) ?? 0) < 20 { usleep(10_000) }
        }
        let second = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        let end = try await first.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect([0, 4].contains(second.status), "\(second.stderrText)")
        // Each line names the other run, but the folder push's summary (issue 29 item 5).
        for line in second.stderrText.split(separator: "\n") where !line.hasPrefix("push: ") {
            #expect(line.contains("another r2up (pid \(first.process.processIdentifier)) is uploading"), "\(line)")
        }
        let rows = try Store(path: database).recentUploads(limit: 1_000).map(\.r2Key)
        #expect(rows.count == 300 && Set(rows).count == 300, "\(rows.count) rows, \(Set(rows).count) keys")
        let stored = try await IndependentClient.fetch(Array(expected.keys), bucket: server.bucket, server: server)
        for (key, sha256) in expected { #expect(stored[key]?.sha256 == sha256, "\(key)") }
    }

    @Test("push DIR while another r2up uploads a file of it: named, exit 4, not 'nothing to upload'")
    func folderHeldElsewhere() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-folderheld")
        let directory = try TestDirectory()
        let album = directory.path + "/album"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        let file = try directory.makeFile("album/slow take.wav", size: 6 << 20, seed: 41)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let first = try Run(["push", album + "/", "--prefix", scope, "--db", database, "--bwlimit", "1M"], environment: environment)
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, first.process.isRunning {
                let owners = (try? Store(path: database).rawRead { db in try Int.fetchAll(db, sql: "SELECT ownerPID FROM jobs WHERE ownerPID IS NOT NULL AND state != 'staged'") }) ?? []
                if !owners.isEmpty { break }
                usleep(20_000)
            }
        }
        let second = try await Subprocess.run(R2UpBinary.path, ["push", album + "/", "--prefix", scope, "--db", database], environment: environment)
        #expect(second.status == 4, "\(second.stderrText)")
        // Then the folder push's summary line (issue 29 item 5): the file held elsewhere is no failure.
        #expect(second.stderrText.hasPrefix(
            "r2up: \(file.path): another r2up (pid \(first.process.processIdentifier)) is uploading it; see r2up queue\npush: 0 uploaded (0 bytes), 0 copied, 0 skipped (unchanged), 0 failed in "),
            "\(second.stderrText)")
        let end = try await first.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(try Store(path: database).uploadCount() == 1)
    }

    @Test("two pushes of one file at once: the second says another r2up is uploading it (exit 4); one upload, one row")
    func secondPushWaitsItsTurn() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-twice")
        let directory = try TestDirectory()
        let file = try directory.makeFile("master.wav", size: 24 << 20, seed: 34)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        let arguments = ["push", file.path, "--prefix", scope, "--db", database, "--bwlimit", "6M"]
        let first = try Run(arguments, environment: environment)
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, first.process.isRunning {
                let owners = (try? Store(path: database).rawRead { db in try Int.fetchAll(db, sql: "SELECT ownerPID FROM jobs WHERE ownerPID IS NOT NULL") }) ?? []
                if !owners.isEmpty { break }
                usleep(20_000)
            }
        }
        let second = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(second.status == 4)
        #expect(second.stderrText == "r2up: \(file.path): another r2up (pid \(first.process.processIdentifier)) is uploading it; see r2up queue\n")
        let end = try await first.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(try Store(path: database).recentUploads(limit: 10).count == 1)
        let stored = try await IndependentClient.fetch([scope + "master.wav"], bucket: server.bucket, server: server)
        #expect(stored[scope + "master.wav"]?.sha256 == file.sha256)
    }

    @Test("another process holds the database's write lock for 5 s mid-push: parts keep reaching the server, the state lands after")
    func busyDatabaseNeverStopsTheBytes() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-busy")
        let directory = try TestDirectory()
        let file = try directory.makeFile("mix.wav", size: 100 << 20, seed: 35)
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let push = try Run(
            ["push", file.path, "--prefix", scope, "--db", database, "--bwlimit", "12M", "--concurrency", "2"],
            environment: environment)
        // Once a part is recorded, python holds an exclusive transaction for 5 s.
        let locker = try await offThePool { () -> Process in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, push.process.isRunning {
                let parts = (try? Store(path: database).rawRead { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM parts") }) ?? nil
                if (parts ?? 0) > 0 { break }
                usleep(50_000)
            }
            return try Self.holdWriteLock(database, seconds: 5)
        }
        let lockedAt = proxy.injectedFaults(includingClean: true).last?["t"] as? Double ?? 0
        try await offThePool { locker.waitUntilExit() }
        let releasedAt = proxy.injectedFaults(includingClean: true).last?["t"] as? Double ?? 0
        let end = try await push.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(locker.terminationStatus == 0)
        // Parts answered by the server while the database was locked.
        let partsDuringLock = proxy.injectedFaults(includingClean: true).filter { entry in
            guard entry["method"] as? String == "PUT", (entry["target"] as? String ?? "").contains("partNumber="),
                let t = entry["t"] as? Double
            else { return false }
            return t > lockedAt + 0.5 && t < lockedAt + 4.5
        }
        #expect(partsDuringLock.count >= 2, "parts during the lock (\(lockedAt)–\(releasedAt) s): \(partsDuringLock.count)")
        let store = try Store(path: database)
        #expect(try store.recentUploads(limit: 10).map(\.r2Key) == [scope + "mix.wav"])
        #expect(try store.rawRead { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test("a database locked past the busy timeout: the push waits, then exits 5 with one line naming the database and the holder; nothing written or sent")
    func databaseLockedTooLong() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("truth-locked")
        let directory = try TestDirectory()
        let file = try directory.makeFile("take.flac", size: 1000, seed: 36)
        var environment = server.environment
        environment["HOME"] = directory.path
        let database = directory.path + "/r2up.sqlite"
        _ = try Store(path: database)
        let python = try await offThePool { try Self.holdWriteLock(database, seconds: 14) }
        let push = try await Subprocess.run(R2UpBinary.path, ["push", file.path, "--prefix", scope, "--db", database], environment: environment)
        try await offThePool { python.waitUntilExit() }
        #expect(push.status == 5)
        let lines = push.stderrText.split(separator: "\n")
        #expect(lines.count == 1, "\(push.stderrText)")
        #expect(push.stderrText.hasPrefix("r2up: the database at \(database) stayed locked by another process (held by pid \(python.processIdentifier) python3"), "\(push.stderrText)")
        let store = try Store(path: database)
        #expect(try store.jobs(in: UploadJobState.allCases).isEmpty)
        #expect(try await IndependentClient.fetch([scope + "take.flac"], bucket: server.bucket, server: server).isEmpty)
    }
}
