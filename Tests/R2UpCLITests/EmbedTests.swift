import Foundation
import R2UpKit
import R2UpTestSupport
import Synchronization
import Testing

/// The library face as an app uses it: `r2up-embed-example` against the real server, the
/// track-state observation seeing another process's push, and each bad configuration refused
/// before anything is sent or written.
@Suite("embedding (R2UpSession)")
struct EmbedTests {
    /// `r2up-embed-example`, built beside `r2up`.
    static var example: String { (CLI.binary as NSString).deletingLastPathComponent + "/r2up-embed-example" }

    static func decode(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    @Test("the example pushes its files, prints one JSON object per event, and the bytes are in the bucket")
    func examplePushes() async throws {
        let folder = try TemporaryFolder()
        let tag = UInt32.random(in: 0...UInt32.max)
        let first = folder.write("embed-\(tag)-one.m4a", "the first track's bytes")
        let second = folder.write("embed-\(tag)-two.flac", String(repeating: "second track ", count: 1000))
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/embed.sqlite"
        let run = try await ProcessRunner.run(Self.example, [first, second], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let events = Self.decode(run.stdout)
        #expect(events.count == run.stdout.split(separator: "\n").count, "every line is one JSON object: \(run.stdout)")
        for path in [first, second] {
            let name = (path as NSString).lastPathComponent
            let own = events.filter { ($0["file"] as? String) == path || ($0["path"] as? String) == path }
            #expect(own.compactMap { $0["event"] as? String }.filter { $0 != "progress" } == ["queued", "started", "completed"])
            let completed = try #require(own.last)
            #expect(completed["file"] as? String == name)
            #expect(completed["key"] as? String == name)
            let url = try #require(completed["url"] as? String)
            #expect(url == env["R2UP_PUBLIC_URL"]! + "/" + name)
            #expect(try CLIProcess.curl(url) == (try String(contentsOfFile: path, encoding: .utf8)))
        }
        // Read back by an independent client: the bytes in the bucket are the files'.
        let server = try TestServer.require()
        let stored = try await IndependentClient.fetch(
            [first, second].map { ($0 as NSString).lastPathComponent }, bucket: server.bucket, server: server)
        #expect(stored.count == 2)
        #expect(stored.values.map(\.size).sorted() == [23, 13000])
    }

    @Test("a failed upload is a failed event and a non-zero exit")
    func exampleFails() async throws {
        let folder = try TemporaryFolder()
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/embed.sqlite"
        let run = try await ProcessRunner.run(Self.example, [folder.path + "/missing.m4a"], environment: env)
        #expect(run.status == 1)
        let events = Self.decode(run.stdout)
        #expect(events.count == 1)
        #expect(events.first?["event"] as? String == "failed")
        #expect(events.first?["message"] as? String == "\(folder.path)/missing.m4a: no such file")
    }

    @Test("another process's push shows in the track-state observation within 1 s")
    func observesAnotherProcess() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("observed-\(UInt32.random(in: 0...UInt32.max)).m4a", "observed bytes")
        let server = try TestServer.require()
        let database = folder.path + "/shared.sqlite"
        let session = try R2UpSession(Self.configuration(server, database: database))
        let latest = Mutex<(states: [TrackStatus], at: ContinuousClock.Instant)?>(nil)
        let watcher = Task {
            for try await states in session.trackStates(under: folder.path) {
                latest.withLock { $0 = (states, ContinuousClock.now) }
            }
        }
        defer { watcher.cancel() }
        // The first (empty) value: the observation starts with one (a parallel test run may delay it).
        try await Self.waitUntil { latest.withLock { $0 != nil } }
        #expect(latest.withLock { $0?.states.isEmpty } == true)
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = database
        let run = try await CLI.run(["push", track, "--prefix", server.scratchPrefix("observe")], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let exited = ContinuousClock.now
        var seen: ContinuousClock.Instant?
        while ContinuousClock.now - exited < .seconds(3) {
            if let value = latest.withLock({ $0 }), value.states.first?.uploadState == .uploaded {
                seen = value.at
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let at = try #require(seen, "the push of another process never showed")
        #expect(at - exited < .seconds(1), "seen \(at - exited) after the other process ended")
        let state = try #require(latest.withLock { $0?.states.first })
        #expect(state.path == track)
        #expect(state.icon == .uploaded)
        #expect(try session.history(limit: 1).first?.fileName == (track as NSString).lastPathComponent)
    }

    @Test("store changes signal another process's push within 1 s; the library view is status's groups and du's totals")
    func storeChangesAndLibraryView() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("signalled-\(UInt32.random(in: 0...UInt32.max)).m4a", "signalled bytes")
        _ = folder.write("other-\(UInt32.random(in: 0...UInt32.max)).m4a", "bytes never uploaded")
        let server = try TestServer.require()
        let database = folder.path + "/shared.sqlite"
        let session = try R2UpSession(Self.configuration(server, database: database))
        let signals = Mutex<[ContinuousClock.Instant]>([])
        let watcher = Task {
            for try await _ in session.storeChanges() { signals.withLock { $0.append(ContinuousClock.now) } }
        }
        defer { watcher.cancel() }
        try await Self.waitUntil { signals.withLock { !$0.isEmpty } }  // the first signal (now)
        let before = signals.withLock { $0.count }
        #expect(before >= 1)
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = database
        let run = try await CLI.run(["push", track, "--prefix", server.scratchPrefix("signal")], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let exited = ContinuousClock.now
        try await Task.sleep(for: .seconds(1))
        let last = try #require(signals.withLock { $0.last })
        #expect(signals.withLock { $0.count } > before, "no signal after another process's commits")
        #expect(last - exited < .seconds(1), "the last commit signalled \(last - exited) after the other process ended")

        let view = try session.libraryView(under: [folder.path])
        let groups = try session.library(under: folder.path)
        #expect(view.groups.map(\.id) == groups.map(\.id))
        #expect(view.groups.flatMap(\.tracks) == groups.flatMap(\.tracks))
        // The database beside them is a file a push of the folder would take too.
        let tracks = view.groups.flatMap(\.tracks).filter { $0.path.hasSuffix(".m4a") }
        #expect(tracks.map(\.icon).sorted { $0.name < $1.name } == [.localOnly, .uploaded])
        #expect(view.space == (try session.space(under: [folder.path])))
        #expect(view.space.tracks >= 2 && view.space.both > 0 && view.space.localOnly > 0)
    }

    @Test("another process's stopped push shows in the queue reports within 1 s")
    func queueReportsFollowAnotherProcess() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("queued-\(UInt32.random(in: 0...UInt32.max)).m4a", "queued bytes")
        let server = try TestServer.require()
        let database = folder.path + "/shared.sqlite"
        let session = try R2UpSession(Self.configuration(server, database: database))
        let latest = Mutex<(report: QueueReport, at: ContinuousClock.Instant)?>(nil)
        let watcher = Task {
            for try await report in session.queueReports() { latest.withLock { $0 = (report, ContinuousClock.now) } }
        }
        defer { watcher.cancel() }
        try await Self.waitUntil { latest.withLock { $0 != nil } }  // the first report
        #expect(latest.withLock { $0?.report.upNext.isEmpty } == true)
        // A bucket that does not exist stops the run: the job stays queued for the next one.
        var env = CLI.environment(server: try CLI.writerEnvironment(), home: folder.path)
        env["R2UP_DB"] = database
        let bucket = "no-such-bucket-\(UInt32.random(in: 0...UInt32.max))"
        let run = try await CLI.run(["push", track, "--bucket", bucket], environment: env)
        #expect(run.status == 3, "stderr: \(run.stderr)")
        let exited = ContinuousClock.now
        var seen: (report: QueueReport, at: ContinuousClock.Instant)?
        while ContinuousClock.now - exited < .seconds(3) {
            if let value = latest.withLock({ $0 }), (value.report.upNext + value.report.interrupted).contains(where: { $0.path == track }) {
                seen = value
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let found = try #require(seen, "the queued job never showed")
        #expect(found.at - exited < .seconds(1))
        #expect(found.report.counts.queued + found.report.counts.interrupted == 1)
    }

    @Test("progress comes at most four times a second per file and grows to the size")
    func progressEvents() async throws {
        let folder = try TemporaryFolder()
        let server = try TestServer.require()
        let size = 3 << 20
        let track = folder.write("progress-\(UInt32.random(in: 0...UInt32.max)).flac", String(repeating: "p", count: size))
        var configuration = Self.configuration(server, database: folder.path + "/db.sqlite")
        configuration.bandwidthLimit = 1 << 20  // about 3 s for the file
        let session = try R2UpSession(configuration)
        let events = session.events
        let started = ContinuousClock.now
        let push = Task { await session.push([track], prefix: server.scratchPrefix("progress")) }
        var sent: [Int64] = []
        var completed: UploadItem?
        for await event in events {
            if case .progress(let file, let bytes) = event {
                #expect(file.path == track && file.size == Int64(size))
                sent.append(bytes)
            }
            if case .completed(_, let item) = event { completed = item }
            if case .finished = event { break }
        }
        let elapsed = ContinuousClock.now - started
        #expect(await push.value.category == .success)
        #expect(completed?.fileSize == Int64(size))
        #expect(sent == sent.sorted(), "bytes sent only grow: \(sent)")
        #expect(sent.allSatisfy { $0 > 0 && $0 <= Int64(size) })
        #expect(sent.count >= 4, "a 3 s upload reports its progress: \(sent)")
        // At most four a second (one each 250 ms), plus the first.
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(Double(sent.count) <= seconds * 4 + 1, "\(sent.count) progress events in \(seconds) s")
    }

    /// Returns once `condition` holds, or after 5 s (the caller's expectation then fails).
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }

    static func configuration(_ server: TestServer, database: String) -> R2UpSession.Configuration {
        R2UpSession.Configuration(
            endpoint: server.endpoint, accessKeyID: server.accessKey, secretAccessKey: server.secretKey,
            bucket: server.bucket, publicURL: server.publicURL, databasePath: database)
    }

    /// One bad value each: the error names it (never the secret's value), and nothing is written.
    @Test(
        "a bad configuration is a typed error naming the value, before any request; nothing written",
        arguments: [
            ("endpoint not a URL", "the endpoint 'not a url' is not an http(s) URL"),
            ("endpoint ftp", "the endpoint 'ftp://example.com' is not an http(s) URL"),
            ("empty bucket", "the bucket '' is not valid: it is empty"),
            ("secret with a newline", "the secret access key is not valid: it holds a newline (U+000A)"),
            ("database folder missing", "its folder"),
        ])
    func badConfiguration(_ row: (name: String, phrase: String)) throws {
        let folder = try TemporaryFolder()
        let server = try TestServer.require()
        var configuration = Self.configuration(server, database: folder.path + "/db.sqlite")
        let secret = "s3cr3t-\(UInt32.random(in: 0...UInt32.max))\nmore"
        switch row.name {
        case "endpoint not a URL": configuration.endpoint = "not a url"
        case "endpoint ftp": configuration.endpoint = "ftp://example.com"
        case "empty bucket": configuration.bucket = ""
        case "secret with a newline": configuration.secretAccessKey = secret
        default: configuration.databasePath = folder.path + "/missing/db.sqlite"
        }
        #expect {
            _ = try R2UpSession(configuration)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            let text = error.description
            #expect(text.contains(row.phrase), "\(text)")
            #expect(!text.contains("s3cr3t") && !"\(configuration)".contains("s3cr3t"))
            return true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "nothing is written")
    }

    @Test("a database in a read-only folder is refused by name before anything is written (as nobody)")
    func readOnlyDatabaseFolder() async throws {
        let folder = try TemporaryFolder()
        let readOnly = folder.path + "/ro"
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let file = folder.write("a.m4a", "x")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = readOnly + "/db.sqlite"
        let arguments = [file]
        let run =
            getuid() == 0
            ? try await ProcessRunner.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Self.example] + arguments,
                environment: env)
            : try await ProcessRunner.run(Self.example, arguments, environment: env)
        #expect(run.status == 3, "stdout: \(run.stdout) stderr: \(run.stderr)")
        let event = try #require(Self.decode(run.stdout).first)
        #expect(event["message"] as? String == "the database path '\(readOnly)/db.sqlite' is not valid: its folder \(readOnly) is read-only")
        #expect(try FileManager.default.contentsOfDirectory(atPath: readOnly).isEmpty)
    }
}
