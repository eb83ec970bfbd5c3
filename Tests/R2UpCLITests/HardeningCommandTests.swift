import Foundation
import Testing
import R2UpTestSupport

/// Issue 15 at the command line: a closed stdout, and thousands of mutated command lines.
@Suite("Hardening at the command line", .serialized)
struct HardeningCommandTests {
    /// Runs r2up with stdout a pipe whose reading end is already closed, as `| head -1` leaves
    /// it once head has its line: every write to stdout fails with EPIPE.
    static func runWithClosedStdout(_ arguments: [String], environment: [String: String]) async throws -> CLI.Run {
        try await ProcessRunner.offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            process.environment = environment
            let out = Pipe()
            let err = Pipe()
            try out.fileHandleForReading.close()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return CLI.Run(status: process.terminationStatus, stdout: "", stderr: String(decoding: errData, as: UTF8.self))
        }
    }

    @Test("read commands whose reader went away end quietly with exit 141", arguments: [
        ["history", "--limit", "1000"], ["history", "--json"], ["queue"], ["queue", "--json"],
    ])
    func closedStdoutReading(command: [String]) async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/db.sqlite"
        try ReadCommands.record((0..<50).map { ReadCommands.item("albums/\($0).m4a", size: 10, minutes: $0) }, at: database)
        let run = try await Self.runWithClosedStdout(
            command + ["--db", database], environment: CLI.environment(home: folder.path))
        #expect(run.status == 141, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty, "stderr: \(run.stderr)")
    }

    @Test("ls into a closed stdout ends quietly with exit 141: no summary on stderr")
    func closedStdoutListing() async throws {
        let folder = try TemporaryFolder()
        let scope = "tests/closed-ls-\(UInt32.random(in: 0...UInt32.max))/"
        try await PullFixtures.put((1...3).map { (scope + "t\($0).m4a", PullFixtures.Body.text("track \($0)")) })
        let run = try await Self.runWithClosedStdout(
            ["ls", scope, "--db", folder.path + "/db.sqlite"], environment: try PullFixtures.env(folder))
        #expect(run.status == 141, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty, "stderr: \(run.stderr)")
    }

    @Test("push DIR into a closed stdout stops starting uploads, records what finished, and the next push does the rest")
    func closedStdoutPush() async throws {
        let server = try CLI.serverEnvironment()
        let folder = try TemporaryFolder()
        let album = folder.path + "/album"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        // 256 KiB each at 2 MB/s: an upload takes ~0.13 s, so the run is still going when stdout fails.
        let count = 20
        for index in 0..<count {
            try Data(repeating: UInt8(index), count: 256 << 10).write(to: URL(fileURLWithPath: album + "/\(index).m4a"))
        }
        let scope = "tests/closed-stdout-\(UInt32.random(in: 0...UInt32.max))/"
        let database = folder.path + "/db.sqlite"
        let environment = CLI.environment(server: server, home: folder.path)
        let arguments = ["push", album + "/", "--prefix", scope, "--db", database, "--concurrency", "1", "--bwlimit", "2M"]

        let first = try await Self.runWithClosedStdout(arguments, environment: environment)
        #expect(first.status == 141, "stderr: \(first.stderr)")
        #expect(first.stderr.isEmpty, "stderr: \(first.stderr)")
        let afterFirst = try await StoredState.read(database: database, scope: scope)
        // URLs print in track order at the end (issue 29 item 5), so the closed pipe is seen as each
        // upload is about to start (POLLERR on its write end): typically none starts; what
        // finished before is recorded, nothing new starts.
        #expect(afterFirst.historyRows <= 5, "history rows \(afterFirst.historyRows)")
        #expect(afterFirst.objects.count == afterFirst.historyRows)
        let queue = try await CLI.run(["queue", "--db", database], environment: environment)
        // Left by a run that ended: no live process holds them, so they are interrupted (issue 29 item 6).
        #expect(
            queue.stdout.hasPrefix("0 queued · 0 uploading · \(count - afterFirst.historyRows) interrupted · 0 failed"), "\(queue.stdout)")

        let second = try await CLI.run(arguments, environment: environment)
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout.split(separator: "\n").count == count - afterFirst.historyRows)
        let afterSecond = try await StoredState.read(database: database, scope: scope)
        #expect(afterSecond.historyRows == count)
        #expect(afterSecond.objects.count == count)
    }

    /// A stored object that does not match is looked at again, then uploaded again, in the same run.
    @Test("a verification mismatch is HEADed again, then uploaded again, before the job fails")
    func verificationRetried() async throws {
        let server = try CLI.serverEnvironment()
        let folder = try TemporaryFolder()
        let track = folder.write("v.m4a", "verify me")
        let log = folder.path + "/proxy.jsonl"
        // The first HEAD (the bucket's) names the server, whose honouring of If-None-Match is not yet
        // known to the run; the next two say the object is one byte longer than what was sent.
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "HEAD",
             "--script", "2=bad-length,3=bad-length", "--log", log, "--log-all", "--max-seconds", "120"])
        defer { proxy.stop() }
        var environment = CLI.environment(server: server, home: folder.path)
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let key = "tests/verify-\(UInt32.random(in: 0...UInt32.max))/v.m4a"
        // --verify head: SeaweedFS verifies the checksum a PUT carries, so by default no HEAD follows.
        let run = try await CLI.run(
            ["push", track, "--key", key, "--verify", "head", "--db", folder.path + "/db.sqlite"], environment: environment)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.hasSuffix("/\(key)\n"))
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains("\"method\": \"PUT\"") }.count == 2)
        #expect(lines.filter { $0.contains("\"method\": \"HEAD\"") }.count == 4)
        #expect(lines.filter { $0.contains("\"fault\": \"bad-length\"") }.count == 2)

        // Every HEAD wrong: the job fails after the second upload's second look, and nothing is recorded.
        let always = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server["R2UP_ENDPOINT"]!.replacingOccurrences(of: "http://", with: ""), "--only-methods", "HEAD",
             "--bad-length", "1.0", "--max-seconds", "120"])
        defer { always.stop() }
        environment["R2UP_ENDPOINT"] = always.endpoint
        let failed = try await CLI.run(
            ["push", track, "--key", key + ".2", "--verify", "head", "--db", folder.path + "/db.sqlite"], environment: environment)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("the stored object does not match: its size is 10 bytes, 9 were sent"), "\(failed.stderr)")
        let history = try await CLI.run(["history", "--db", folder.path + "/db.sqlite"], environment: environment)
        #expect(history.stdout.split(separator: "\n").count == 2)  // the header and the first push
    }

    /// 2,000 seeded mutations of real command lines through the built binary: whatever the
    /// arguments, r2up exits with a code of its own (never a signal, never >= 128) and never
    /// prints Swift's "Fatal error". No credentials and an endpoint on a closed port keep
    /// every run local and quick; two run at a time.
    @Test("2,000 mutated command lines: no crash")
    func mutatedCommandLines() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("a.m4a", "bytes")
        try FileManager.default.createDirectory(atPath: folder.path + "/album", withIntermediateDirectories: true)
        _ = folder.write("album/b.flac", "bytes")
        var environment = CLI.environment(home: folder.path)
        environment["R2UP_DB"] = folder.path + "/db.sqlite"
        environment["R2UP_ENDPOINT"] = "http://127.0.0.1:1"
        let corpus: [[String]] = [
            ["push", track, "--key", "albums/a.m4a", "--concurrency", "4", "--retries", "0"],
            ["push", folder.path + "/album", "--prefix", "albums/", "--meta", "artist=X", "--cache-control", "max-age=60"],
            ["sync", folder.path + "/album", "--min-age", "10s", "--include", "*.flac", "--exclude", "Live/*", "--dry-run"],
            ["presign", "albums/a.m4a", "--expires", "1h"],
            ["history", "--limit", "20", "--json"],
            ["pull", "albums/", folder.path + "/out", "--concurrency", "2", "--bwlimit", "1M"],
            ["ls", "albums/", "--json"],
            ["copy-url", "0BEBB4D4-0000-4000-8000-000000000000"],
            ["status", folder.path + "/album"],
            ["queue", "--json"],
            ["retry", "--all", "--part-size", "8M"],
            ["config", "show", "--json"],
            ["push", track, "--public-url", "https://cdn.example.com", "--bucket", "music", "--endpoint", "http://127.0.0.1:1"],
        ]
        let values = [
            "", "-1", "-3", "0", "1e16", "99999999999999999999", "nan", "inf", "[", "]", "*", "\\", "%%zz", "%", "/", "//",
            "../x", "a/../b", "text/plain\r\nX: 1", "\u{0}", "\u{7F}", "é", "\u{FFFD}", "--", "-", "--json", "--help",
            "http://", "cdn.example.com", "http://exa mple.com", "https://h/?q=1", "Bad_Bucket!", "K=1", "k=2", "=", "8d",
            "0.5", "5G", "6G", "1K", "12345678901234567890G", String(repeating: "k", count: 1100), "1969-12-31", "ümlaut/ß",
        ]
        let options = [
            "--concurrency", "--retries", "--limit", "--expires", "--min-age", "--part-size", "--bwlimit", "--key", "--prefix",
            "--public-url", "--endpoint", "--bucket", "--region", "--content-type", "--cache-control", "--meta", "--include",
            "--exclude", "--checksum", "--verify", "--multipart-threshold", "--profile", "--db", "--ca-bundle",
        ]
        var random = SplitMix64(seed: 0x15_C0DE)
        var lines: [[String]] = []
        for _ in 0..<2000 {
            var line = corpus[Int(random.next() % UInt64(corpus.count))]
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = line.isEmpty ? 0 : Int(random.next() % UInt64(line.count))
                switch random.next() % 6 {
                case 0: if !line.isEmpty { line[at] = values[Int(random.next() % UInt64(values.count))] }
                case 1: if !line.isEmpty { line.remove(at: at) }
                case 2: line.insert(contentsOf: [options[Int(random.next() % UInt64(options.count))], values[Int(random.next() % UInt64(values.count))]], at: at)
                case 3: if line.count > 1 { line.swapAt(at, Int(random.next() % UInt64(line.count))) }
                case 4: line.insert(line.isEmpty ? "push" : line[at], at: at)
                default: line.append(values[Int(random.next() % UInt64(values.count))])
                }
            }
            // Never ask for help or the version text: that is argument-parser's, and slow to render.
            lines.append(line.filter { !["--help", "-h", "help", "--version"].contains($0) })
        }
        let commandLines = lines
        let runEnvironment = environment
        let results = try await withThrowingTaskGroup(of: (Int, CLI.Run).self) { group in
            var results: [(Int, CLI.Run)] = []
            var next = 0
            for _ in 0..<2 where next < commandLines.count {
                let index = next
                group.addTask { (index, try await CLI.run(commandLines[index], environment: runEnvironment)) }
                next += 1
            }
            while let result = try await group.next() {
                results.append(result)
                if next < commandLines.count {
                    let index = next
                    group.addTask { (index, try await CLI.run(commandLines[index], environment: runEnvironment)) }
                    next += 1
                }
            }
            return results
        }
        #expect(results.count == 2000)
        for (index, run) in results {
            #expect(run.status < 128, "\(lines[index]) exited \(run.status): \(run.stderr.prefix(300))")
            #expect(!run.stderr.contains("Fatal error"), "\(lines[index]): \(run.stderr.prefix(300))")
            #expect(!run.stderr.contains("Stack dump") && !run.stderr.contains("Backtrace"), "\(lines[index])")
        }
    }
}
