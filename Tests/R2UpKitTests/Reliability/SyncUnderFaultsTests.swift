import Foundation
import GRDB
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// Issue 5, items 2 and 3: `r2up sync` (the real binary) through faults, and killed over and over.
@Suite("Reliability: sync under faults and crashes")
struct SyncUnderFaultsTests {
    @Test("sync of 200 small files and three 40 MiB files through resets, errors and stalls: one run, exit 0, nothing lost")
    func syncUnderFaults() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("sync-faults")
        let directory = try TestDirectory()
        let library = directory.path + "/library"
        var sizes: [String: Int] = [:]
        for index in 1...200 { sizes[String(format: "artist %d/track %03d.m4a", index % 10, index)] = 512 + index * 331 }
        for name in ["mix A.flac", "mix B.flac", "mix C.flac"] { sizes["mixes/" + name] = 40 << 20 }
        let expected = try await RandomFiles.write(sizes, in: library, keyPrefix: scope)
        let proxy = try await FaultProxy(server: server, arguments: PushUnderFaultsTests.issueFiveFaults(seed: 2027))
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        let started = Date()
        // --retries 8: at these rates one request in ~6 fails, and 5 tries in a row fail for one
        // request in ~7,000 — a run of ~450 requests would fail every sixteenth time on luck alone.
        let run = try await Subprocess.run(
            R2UpBinary.path,
            ["sync", library, "--prefix", scope, "--db", database, "--min-age", "0", "--retries", "8"],
            environment: environment)
        let seconds = Date().timeIntervalSince(started)
        #expect(run.status == 0, "stdout: \(run.stdoutText) stderr: \(run.stderrText)")
        #expect(run.stdoutText.hasPrefix("sync: 203 uploaded ("), "\(run.stdoutText)")
        #expect(run.stdoutText.contains(" 0 failed, 0 unchanged, 0 waiting"), "\(run.stdoutText)")

        let (verified, lost) = try await PushUnderFaultsTests.expectNothingLost(
            expected, scope: scope, database: database, server: server)
        #expect(!(run.stdoutText + run.stderrText).contains(server.secretKey))

        let figures = FaultFigures(proxy.injectedFaults(includingClean: true))
        #expect(figures.faults >= 20, "too few faults to prove anything: \(figures)")
        print(
            """
            reliability: sync of \(expected.count) files (200 small, 3 × 40 MiB) through faultproxy, seed 2027, \
            \(Int(seconds)) s: \(figures.requests) requests, \(figures.faults) faults survived \(figures.byKind), \
            \(figures.retried) requests retried, \(figures.bytesResent) bytes re-sent, \(verified) objects verified, \(lost) lost
            """)
    }

    @Test("21 seeded SIGKILLs of r2up sync (at its start, after CompleteMultipartUpload, at random): the end state is a clean run's")
    func syncKilledAgainAndAgain() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("sync-crash")
        let directory = try TestDirectory()
        let library = directory.path + "/library"
        var sizes: [String: Int] = [:]
        for index in 1...60 { sizes[String(format: "album %d/track %02d.m4a", index % 4, index)] = 2048 + index * 613 }
        sizes["sets/live one.flac"] = 24 << 20  // three 8 MiB parts each
        sizes["sets/live two.flac"] = 24 << 20
        let expected = try await RandomFiles.write(sizes, in: library, keyPrefix: scope)
        // A logging proxy, no faults: it shows every request each run sent.
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        var environment = server.environment
        environment["HOME"] = directory.path
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let database = directory.path + "/r2up.sqlite"
        // 2 MB/s: ~25 s of transfer in all, so the kills land all over the work.
        let arguments = [
            "sync", library, "--prefix", scope, "--db", database, "--min-age", "0", "--bwlimit", "2M", "--concurrency", "4",
        ]
        var random = SplitMix64(seed: 2026)
        var violations: [String] = []
        var kills = 0
        var moments: [String] = []

        func recordedParts() throws -> Set<String> {
            guard FileManager.default.fileExists(atPath: database) else { return [] }
            return try Store(path: database).rawRead { db in
                Set(
                    try Row.fetchAll(db, sql: "SELECT jobs.uploadID, parts.partNumber FROM parts JOIN jobs ON jobs.id = parts.jobID")
                        .map { "\($0[0] as String? ?? "")#\($0[1] as Int)" })
            }
        }

        // One run killed when `moment` says so; returns false if it ended by itself first.
        func killedRun(_ name: String, when moment: @escaping @Sendable (Process, Int) -> Void) async throws -> Bool {
            let recorded = try recordedParts()
            let logStart = proxy.injectedFaults(includingClean: true).count
            let process = Process()
            process.executableURL = URL(fileURLWithPath: R2UpBinary.path)
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await offThePool {
                moment(process, logStart)
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            // No part recorded before this run may have been sent by it.
            for entry in proxy.injectedFaults(includingClean: true).dropFirst(logStart) {
                if let part = Self.uploadPart(entry), recorded.contains(part) { violations.append("\(name) re-sent \(part)") }
            }
            guard process.terminationReason == .uncaughtSignal else { return false }
            kills += 1
            moments.append(name)
            return true
        }

        // At its start (scanning, opening the store): 0–60 ms after exec.
        for index in 0..<3 {
            let delay = UInt32(random.next(upTo: 60_000))
            let killed = try await killedRun("start \(index) +\(delay / 1000) ms") { _, _ in usleep(delay) }
            #expect(killed)
        }
        // Between CompleteMultipartUpload and the store write: the proxy logs the reply before
        // r2up reads it, and the kill follows at once.
        let afterComplete = try await killedRun("after CompleteMultipartUpload") { process, logStart in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline && process.isRunning {
                let fresh = proxy.injectedFaults(includingClean: true).dropFirst(logStart)
                if fresh.contains(where: { $0["method"] as? String == "POST" && ($0["target"] as? String ?? "").contains("uploadId=") }) {
                    return
                }
                usleep(2_000)
            }
        }
        #expect(afterComplete, "the sync finished before any CompleteMultipartUpload could be interrupted")
        // The rest at seeded random moments: mid-part, mid-PUT, during the store's commits.
        var ended = false
        while kills < 21 && !ended {
            let delay = UInt32(150_000 + random.next(upTo: 1_350_000))
            ended = try await !killedRun("random +\(delay / 1000) ms") { _, _ in usleep(delay) }
        }
        #expect(kills >= 21, "only \(kills) kills landed before the work ran out: \(moments)")

        // Then a run left alone: it finishes what is left.
        let logStart = proxy.injectedFaults(includingClean: true).count
        let recorded = try recordedParts()
        let last = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(last.status == 0, "stdout: \(last.stdoutText) stderr: \(last.stderrText)")
        for entry in proxy.injectedFaults(includingClean: true).dropFirst(logStart) {
            if let part = Self.uploadPart(entry), recorded.contains(part) { violations.append("last run re-sent \(part)") }
        }
        #expect(violations.isEmpty, "\(violations)")

        // The end state of a clean run.
        let (verified, lost) = try await PushUnderFaultsTests.expectNothingLost(
            expected, scope: scope, database: database, server: server)
        let store = try Store(path: database)
        #expect(try store.rawRead { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        #expect(try store.jobs(in: [.staged, .initiated, .uploading, .verifying, .failedRetryable, .failedPermanent]).isEmpty)
        // And a further sync finds nothing to do.
        let again = try await Subprocess.run(R2UpBinary.path, arguments, environment: environment)
        #expect(again.stdoutText.hasPrefix("sync: 0 uploaded (0 bytes), 0 failed, 62 unchanged"), "\(again.stdoutText)")

        let log = proxy.injectedFaults(includingClean: true)
        let puts = log.filter { $0["method"] as? String == "PUT" }
        // A clean run completes each file's bytes once; the rest was completed again after a kill
        // (a PUT cut short by a kill never reaches the log).
        let resent = puts.compactMap { $0["length"] as? Int }.reduce(0, +) - sizes.values.reduce(0, +)
        print(
            """
            reliability: sync of \(expected.count) files killed \(kills) times (\(moments.joined(separator: ", "))): \
            \(log.count) requests answered, \(puts.count) PUTs completed, \(max(0, resent)) bytes completed twice, \
            \(verified) objects verified, \(lost) lost, \(violations.count) recorded parts re-sent
            """)
    }

    /// "uploadId#partNumber" of an UploadPart request in the proxy's log, else nil.
    static func uploadPart(_ entry: [String: Any]) -> String? {
        guard entry["method"] as? String == "PUT", let target = entry["target"] as? String,
            let query = URLComponents(string: "http://x" + target)?.queryItems,
            let part = query.first(where: { $0.name == "partNumber" })?.value,
            let upload = query.first(where: { $0.name == "uploadId" })?.value
        else { return nil }
        return "\(upload)#\(part)"
    }
}
