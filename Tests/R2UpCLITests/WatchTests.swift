import Foundation
import Synchronization
import Testing
import R2UpTestSupport

/// `r2up watch` as a service runs it: the built binary, real inotify, the real server; what
/// landed is read back with boto3 and the history with sqlite3.
@Suite("r2up watch", .serialized)
struct WatchTests {
    func prefix(_ label: String) -> String { "tests/watch-\(label)-\(UInt32.random(in: 0...UInt32.max))/" }

    func environment(_ folder: borrowing TemporaryFolder) throws -> [String: String] {
        CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
    }

    @Test("a watched folder made unreadable: one notice; a file written in it meanwhile is uploaded once it can be read")
    func folderClosedAndReopened() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        let sub = library + "/sub"
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        for path in [folder.path, library, sub] { try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path) }
        let scope = prefix("closed")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", folder.path + "/db.sqlite", "--json", "--min-age", "1s"],
            environment: try environment(folder), in: folder.path, unprivileged: true)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: sub)
        try await watch.waitFor("the notice") { events in
            events.contains { ($0["message"] as? String)?.contains("sub cannot be read now") == true }
        }
        // Written while r2up may not look (root can; nobody, or a user, cannot).
        try Data(repeating: 0x62, count: 2000).write(to: URL(fileURLWithPath: sub + "/late.m4a"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: sub + "/late.m4a")
        try await Task.sleep(for: .milliseconds(500))
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: sub)
        try await watch.waitFor("the upload") { $0.contains { $0["event"] as? String == "uploaded" } }
        let uploads = watch.events.filter { $0["event"] as? String == "uploaded" }
        #expect(uploads.map { $0["key"] as? String } == [scope + "sub/late.m4a"], "\(watch.events)")
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test("a subfolder unreadable when watch starts, made readable: watched from then on, not left to the 15 s rescan")
    func folderOpenedLater() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        let sub = library + "/sub"
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        for path in [folder.path, library] { try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: sub)
        let scope = prefix("opened")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", folder.path + "/db.sqlite", "--json", "--min-age", "1s"],
            environment: try environment(folder), in: folder.path, unprivileged: true)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: sub)
        try await Task.sleep(for: .milliseconds(500))
        try Data(repeating: 0x63, count: 2000).write(to: URL(fileURLWithPath: sub + "/new.m4a"))
        // The 15 s rescan comes later than this: only a watch on the folder takes the file in time.
        try await watch.waitFor("the upload", timeout: .seconds(6)) { $0.contains { $0["event"] as? String == "uploaded" } }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test("files still young at the start: the first pass says they wait (none uploaded yet), then each is uploaded once")
    func youngAtStart() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        for name in ["a.m4a", "b.m4a"] { try Data(repeating: 0x61, count: 1000).write(to: URL(fileURLWithPath: library + "/" + name)) }
        let scope = prefix("young")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", folder.path + "/db.sqlite", "--json", "--min-age", "3s"],
            environment: try environment(folder), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        let watching = watch.events.first { $0["event"] as? String == "watching" }
        #expect(watching?["uploaded"] as? Int == 0, "\(watch.events)")
        #expect(watching?["waiting"] as? Int == 2, "\(watch.events)")
        try await watch.waitFor("both uploads") { $0.filter { $0["event"] as? String == "uploaded" }.count == 2 }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test("a file written slowly over 3 s (closed and reopened) is uploaded once, complete; a concurrent sync exits 4 naming the watcher")
    func slowWriter() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("slow")
        let env = try environment(folder)
        let watch = try WatchProcess(["watch", library, "--prefix", scope, "--db", database, "--json"], environment: env, in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }

        let sync = try await CLI.run(["sync", library, "--db", database], environment: env)
        #expect(sync.status == 4)
        #expect(sync.stderr.contains("another r2up watch (pid \(watch.pid)) is running"), "\(sync.stderr)")

        let path = library + "/take.wav"
        var written = Data()
        for index in 0..<7 {
            let chunk = Data(repeating: UInt8(65 + index), count: 50_000)
            try Self.append(chunk, to: path)
            written.append(chunk)
            try await Task.sleep(for: .milliseconds(500))
        }
        try await watch.waitFor("the upload") { $0.contains { $0["event"] as? String == "uploaded" } }
        try await Task.sleep(for: .seconds(3))  // nothing more comes
        let uploads = watch.events.filter { $0["event"] as? String == "uploaded" }
        #expect(uploads.count == 1, "\(watch.events)")
        #expect(uploads.first?["key"] as? String == scope + "take.wav")
        #expect(uploads.first?["size"] as? Int == written.count)
        #expect(uploads.first?["url"] as? String == (try CLI.serverEnvironment()["R2UP_PUBLIC_URL"] ?? "") + "/" + scope + "take.wav")
        let state = try await WatchState.read(database: database, prefix: scope)
        #expect(state.history == [scope + "take.wav": 1])
        #expect(state.objects[scope + "take.wav"] == WatchState.Object(size: written.count, sha256: WatchState.sha256(written)))

        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        #expect(watch.events.last?["event"] as? String == "stopped")
        // Off a terminal without --json: one URL per upload on stdout, no escape codes anywhere.
        let plain = try WatchProcess(["watch", library, "--prefix", scope, "--db", database], environment: env, in: folder.path)
        defer { plain.kill() }
        try await plain.waitForText("r2up: watching")
        _ = FileManager.default.createFile(atPath: library + "/second.flac", contents: Data("second".utf8))
        try await plain.waitForText(scope + "second.flac", inStdout: true)
        plain.signal(SIGINT)
        #expect(try await plain.exit() == 0)
        #expect(plain.stdout == (try CLI.serverEnvironment()["R2UP_PUBLIC_URL"] ?? "") + "/" + scope + "second.flac\n")
        #expect(!plain.stdout.contains("\u{1B}") && !plain.stderr.contains("\u{1B}"))
        #expect(plain.stderr.contains("r2up: watch stopped (1 uploaded, 0 failed)"), "\(plain.stderr)")
    }

    @Test("x.part renamed to x.wav: only x.wav is uploaded; new nested folders and a folder moved in are taken, and watched")
    func renamesAndFolders() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("names")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "1s"], environment: try environment(folder),
            in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }

        _ = FileManager.default.createFile(atPath: library + "/x.part", contents: Data("partial take".utf8))
        try await Task.sleep(for: .milliseconds(1500))  // older than --min-age: only its name keeps it back
        try FileManager.default.moveItem(atPath: library + "/x.part", toPath: library + "/x.wav")
        // A nested folder made in place, its file written at once (before a watch can be on it).
        try FileManager.default.createDirectory(atPath: library + "/New/Deep", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: library + "/New/Deep/a.flac", contents: Data("deep".utf8))
        // A folder made elsewhere and moved in whole.
        let outside = folder.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside + "/Disc 2", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outside + "/Disc 2/b.flac", contents: Data("moved in".utf8))
        try FileManager.default.moveItem(atPath: outside, toPath: library + "/Album")
        let expected = [scope + "x.wav", scope + "New/Deep/a.flac", scope + "Album/Disc 2/b.flac"]
        try await watch.waitFor("three uploads") { Set($0.compactMap { $0["event"] as? String == "uploaded" ? $0["key"] as? String : nil }) == Set(expected) }
        // The moved-in folder is watched now: a file landing in it is taken too.
        _ = FileManager.default.createFile(atPath: library + "/Album/Disc 2/c.flac", contents: Data("later".utf8))
        try await watch.waitFor("the later file") { $0.contains { $0["key"] as? String == scope + "Album/Disc 2/c.flac" && $0["event"] as? String == "uploaded" } }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope)
        #expect(state.history == Dictionary(uniqueKeysWithValues: (expected + [scope + "Album/Disc 2/c.flac"]).map { ($0, 1) }))
        #expect(state.objects.keys.sorted() == (expected + [scope + "Album/Disc 2/c.flac"]).sorted())
        #expect(!watch.events.contains { ($0["file"] as? String)?.hasSuffix(".part") == true }, "\(watch.events)")
    }

    @Test("2,000 files landing in a burst: all uploaded, one history row each")
    func burst() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library + "/burst", withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("burst")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "1s", "--concurrency", "16"],
            environment: try environment(folder), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        let body = Data(repeating: 0x5A, count: 1024)
        for index in 0..<2000 {
            _ = FileManager.default.createFile(atPath: library + "/burst/\(String(format: "%04d", index)).wav", contents: body)
        }
        try await watch.waitFor("2,000 uploads", timeout: .seconds(240)) { events in
            events.count { $0["event"] as? String == "uploaded" } >= 2000
        }
        try await Task.sleep(for: .seconds(1))
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        #expect(watch.events.count { $0["event"] as? String == "uploaded" } == 2000)
        let state = try await WatchState.read(database: database, prefix: scope, hashes: false)
        #expect(state.history.count == 2000)
        #expect(state.history.values.allSatisfy { $0 == 1 })
        #expect(state.objects.count == 2000)
    }

    @Test("an inotify queue overflow (a small queue, the watcher paused) is recovered by a rescan")
    func overflow() async throws {
        let knob = "/proc/sys/fs/inotify/max_queued_events"
        guard let saved = try? String(contentsOfFile: knob, encoding: .utf8), access(knob, W_OK) == 0 else {
            Issue.record("\(knob) is not writable here: the overflow test needs root")
            return
        }
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("overflow")
        // The queue size is fixed when an inotify instance is made: small only while the watch starts.
        try "32\n".write(toFile: knob, atomically: false, encoding: .utf8)
        let watch: WatchProcess
        do {
            defer { try? saved.write(toFile: knob, atomically: false, encoding: .utf8) }
            watch = try WatchProcess(
                ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "500ms"],
                environment: try environment(folder), in: folder.path)
            try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        }
        defer { watch.kill() }
        watch.signal(SIGSTOP)
        for index in 0..<300 {
            _ = FileManager.default.createFile(atPath: library + "/f\(index).wav", contents: Data("file \(index)".utf8))
        }
        watch.signal(SIGCONT)
        try await watch.waitFor("300 uploads", timeout: .seconds(120)) { $0.count { $0["event"] as? String == "uploaded" } >= 300 }
        #expect(watch.events.contains { ($0["message"] as? String)?.contains("inotify queue overflowed") == true })
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope, hashes: false)
        #expect(state.history.count == 300 && state.history.values.allSatisfy { $0 == 1 })
    }

    @Test("the inotify watch limit reached: one line naming the sysctl, and the folders left out are rescanned")
    func watchLimit() async throws {
        let knob = "/proc/sys/fs/inotify/max_user_watches"
        guard let saved = try? String(contentsOfFile: knob, encoding: .utf8), access(knob, W_OK) == 0 else {
            Issue.record("\(knob) is not writable here: the watch-limit test needs root")
            return
        }
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        let names = (0..<8).map { "Album \($0)" }
        for name in names { try FileManager.default.createDirectory(atPath: library + "/" + name, withIntermediateDirectories: true) }
        let database = folder.path + "/db.sqlite"
        let scope = prefix("limit")
        // Room for three more watches than the machine uses now (the limit is per user, checked as
        // each watch is added): lowered only while the watch starts.
        let used = Self.inotifyWatchesInUse()
        try "\(used + 3)\n".write(toFile: knob, atomically: false, encoding: .utf8)
        let watch: WatchProcess
        do {
            defer { try? saved.write(toFile: knob, atomically: false, encoding: .utf8) }
            watch = try WatchProcess(
                ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "500ms"],
                environment: try environment(folder), in: folder.path)
            try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        }
        defer { watch.kill() }
        let watched = watch.events.first { $0["event"] as? String == "watching" }?["folders"] as? Int ?? 0
        #expect(watched == 3, "\(watch.events)")
        let notices = watch.events.compactMap { $0["event"] as? String == "notice" ? $0["message"] as? String : nil }
        #expect(notices.count == 1 && notices[0].hasPrefix("the inotify watch limit is reached (3 folders watched); raise it with `sudo sysctl fs.inotify.max_user_watches=524288`"), "\(notices)")
        for name in names {
            _ = FileManager.default.createFile(atPath: library + "/\(name)/take.wav", contents: Data(name.utf8))
        }
        try await watch.waitFor("eight uploads", timeout: .seconds(40)) { $0.count { $0["event"] as? String == "uploaded" } == 8 }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope, hashes: false)
        #expect(state.history == Dictionary(uniqueKeysWithValues: names.map { (scope + $0 + "/take.wav", 1) }))
    }

    /// inotify watches held by every process now (each is one "inotify wd:" line in /proc/PID/fdinfo).
    static func inotifyWatchesInUse() -> Int {
        var count = 0
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fdinfo")) ?? [] {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { continue }
                count += text.split(separator: "\n").count { $0.hasPrefix("inotify wd:") }
            }
        }
        return count
    }

    @Test("SIGTERM mid-transfer: exit 0 within the grace, lock released, the next watch finishes the upload")
    func sigterm() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("term")
        let env = try environment(folder)
        let big = Self.pattern(24 << 20)
        try big.write(to: URL(fileURLWithPath: library + "/big.wav"))
        try Self.age(library + "/big.wav")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--bwlimit", "1M"], environment: env, in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("queued") { $0.contains { $0["event"] as? String == "queued" } }
        try await Task.sleep(for: .seconds(2))
        // From another terminal, the queue shows the watch's upload live.
        let queue = try await CLI.run(["queue", "--json", "--db", database], environment: env)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any], "\(queue.stderr)")
        // (A multipart job counts as uploading once its first part is in; before that it is up next.)
        let jobs = ((report["uploading"] as? [[String: Any]]) ?? []) + ((report["upNext"] as? [[String: Any]]) ?? [])
        #expect(jobs.count == 1, "\(queue.stdout)")
        #expect(jobs.first?["ownerPID"] as? Int == Int(watch.pid) && (jobs.first?["bytesSent"] as? Int ?? 0) > 0, "\(queue.stdout)")
        let sent = ContinuousClock.now
        watch.signal(SIGTERM)
        #expect(try await watch.exit(timeout: .seconds(20)) == 0)
        #expect(ContinuousClock.now - sent < .seconds(13))
        #expect(!watch.events.contains { $0["event"] as? String == "uploaded" })
        #expect(watch.events.last?["leftToResume"] as? Int == 1, "\(watch.events)")

        // The lock is free: a sync runs (and, quiet, uploads nothing while its --min-age is huge).
        let sync = try await CLI.run(["sync", library, "--db", database, "--prefix", scope, "--min-age", "365d"], environment: env)
        #expect(sync.status == 0, "\(sync.stderr)")
        let again = try WatchProcess(["watch", library, "--prefix", scope, "--db", database, "--json"], environment: env, in: folder.path)
        defer { again.kill() }
        try await again.waitFor("the upload", timeout: .seconds(60)) { $0.contains { $0["event"] as? String == "uploaded" } }
        again.signal(SIGTERM)
        #expect(try await again.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope)
        #expect(state.history == [scope + "big.wav": 1])
        #expect(state.objects[scope + "big.wav"] == WatchState.Object(size: big.count, sha256: WatchState.sha256(big)))
    }

    @Test("SIGKILL mid-run, then watch again: nothing lost, nothing uploaded twice, no part sent twice")
    func sigkill() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("kill")
        let log = folder.path + "/requests.jsonl"
        let (proxy, server) = try await Self.loggingProxy(log: log)
        defer { proxy.stop() }
        let env = CLI.environment(server: server, home: folder.path)
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "500ms", "--bwlimit", "2M",
             "--multipart-threshold", "5M", "--concurrency", "1"],
            environment: env, in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        var files: [String: Data] = [:]
        for index in 0..<20 {
            let body = Data("small \(index) ".utf8) + Data(repeating: UInt8(index), count: 40_000)
            files["s\(index).wav"] = body
            try body.write(to: URL(fileURLWithPath: library + "/s\(index).wav"))
        }
        try await watch.waitFor("a few uploads", timeout: .seconds(60)) { $0.count { $0["event"] as? String == "uploaded" } >= 3 }
        let big = Self.pattern(40 << 20)  // five 8 MiB parts
        files["zz-big.wav"] = big
        try big.write(to: URL(fileURLWithPath: library + "/zz-big.wav"))
        // Killed once the big one has a part recorded (and others in flight).
        let deadline = ContinuousClock.now + .seconds(30)
        while try await WatchState.recordedParts(database: database) == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        watch.signal(SIGKILL)
        _ = try await watch.exit()
        let partsBefore = try await WatchState.recordedParts(database: database)

        let again = try WatchProcess(["watch", library, "--prefix", scope, "--db", database, "--json"], environment: env, in: folder.path)
        defer { again.kill() }
        try await again.waitFor("watching", timeout: .seconds(120)) { $0.contains { $0["event"] as? String == "watching" } }
        again.signal(SIGTERM)
        #expect(try await again.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope)
        #expect(state.history == Dictionary(uniqueKeysWithValues: files.keys.map { (scope + $0, 1) }), "\(watch.events) \(again.stderr)")
        for (name, body) in files {
            #expect(state.objects[scope + name] == WatchState.Object(size: body.count, sha256: WatchState.sha256(body)), "\(name)")
        }
        // The second run sent only what the first had not: every uploaded key once over both runs.
        let keys = (watch.events + again.events).filter { $0["event"] as? String == "uploaded" }.compactMap { $0["key"] as? String }
        #expect(keys.count == Set(keys).count, "\(keys)")
        // Each part stored once (by upload id and part number), over both runs.
        let parts = Self.requests(log).filter { ($0["method"] as? String) == "PUT" && ($0["status"] as? Int).map { $0 < 300 } == true }
            .compactMap { $0["target"] as? String }.filter { $0.contains("partNumber=") }
            .map { target in target.split(separator: "?").last.map { $0.split(separator: "&").sorted().joined(separator: "&") } ?? target }
        #expect(partsBefore > 0, "the kill came before any part was recorded: the resume went untested; \(watch.stdout.suffix(1500)) \(watch.stderr) \(Self.requests(log).map { "\($0["method"] ?? "") \($0["target"] ?? "") \($0["status"] ?? "")" })")
        #expect(!parts.isEmpty && parts.count == Set(parts).count, "\(parts)")
    }

    @Test("a folder renamed inside the watched tree: its tracks follow, copied in the bucket with 0 payload bytes")
    func folderRenamedIsCopied() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library + "/Old Album", withIntermediateDirectories: true)
        var contents: [String: String] = [:]
        for number in 1...3 {
            let name = "0\(number) Track.flac"
            contents[name] = "track \(number) " + String(repeating: "♪", count: number * 41)
            _ = FileManager.default.createFile(atPath: library + "/Old Album/" + name, contents: Data(contents[name, default: ""].utf8))
            try Self.age(library + "/Old Album/" + name)
        }
        try await Task.sleep(for: .milliseconds(1100))  // their ctime older than --min-age: the first pass takes them
        let database = folder.path + "/db.sqlite"
        let scope = prefix("moves")
        let log = folder.path + "/requests.jsonl"
        let (proxy, server) = try await Self.loggingProxy(log: log)
        defer { proxy.stop() }
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "1s"],
            environment: CLI.environment(server: server, home: folder.path), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        #expect(watch.events.first { $0["event"] as? String == "watching" }?["uploaded"] as? Int == 3)
        let before = Self.requests(log).count

        try FileManager.default.moveItem(atPath: library + "/Old Album", toPath: library + "/New Album")
        let newKeys = Set(contents.keys.map { scope + "New Album/" + $0 })
        // Copies are counted apart from uploads (issue 29 item 8): "copied" events, each with its source.
        try await watch.waitFor("the three copies") { events in
            Set(events.compactMap { $0["event"] as? String == "copied" ? $0["key"] as? String : nil }).isSuperset(of: newKeys)
        }
        #expect(watch.events.filter { $0["event"] as? String == "copied" }.allSatisfy { ($0["from"] as? String)?.hasPrefix(scope + "Old Album/") == true })
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let stopped = watch.events.first { $0["event"] as? String == "stopped" }
        #expect(stopped?["uploaded"] as? Int == 3 && stopped?["copied"] as? Int == 3, "\(String(describing: stopped))")

        let after = Array(Self.requests(log).dropFirst(before))
        let writes = after.filter { ["PUT", "POST"].contains($0["method"] as? String ?? "") }
        #expect(writes.count == 3, "\(after)")
        #expect(writes.reduce(0) { $0 + (($1["length"] as? NSNumber)?.intValue ?? 0) } == 0, "\(writes)")
        for (name, text) in contents {
            #expect(try await TrackIdentityCommandTests.boto3(["get", scope + "New Album/" + name]) == text)
        }
        // The tracks followed their files: one upload row and one copy row each, nothing uploaded twice.
        let history = try await CLI.run(["history", "--all", "--db", database], environment: CLI.environment(server: server, home: folder.path))
        #expect(history.stdout.split(separator: "\n").filter { $0.contains("(copy of \(scope)Old Album/") }.count == 3, "\(history.stdout)")
    }

    @Test("a watch whose reader went away (| head) stops as on SIGTERM and exits 141, even while idle")
    func closedStdout() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let status: Int32? = try await ProcessRunner.offThePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["watch", library, "--prefix", self.prefix("closed"), "--db", folder.path + "/db.sqlite"]
            process.environment = try self.environment(folder)
            let out = Pipe()
            try out.fileHandleForReading.close()  // nothing will ever read: an idle watch must notice
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning && Date() < deadline { usleep(50_000) }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }
        #expect(status == 141)
    }

    @Test("the server gone after the start, before any upload: the watch waits it out (the file failed, retried), not exit 3")
    func outageBeforeAnyUpload() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("outage")
        var server = try CLI.serverEnvironment()
        let upstream = (server["R2UP_ENDPOINT"] ?? "").replacingOccurrences(of: "http://", with: "")
        let proxy = try await HelperServer.start("faultproxy.py", ["--upstream", upstream, "--max-seconds", "300"])
        defer { proxy.stop() }
        server["R2UP_ENDPOINT"] = proxy.endpoint
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "300ms"],
            environment: CLI.environment(server: server, home: folder.path), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        proxy.stop()  // from now on every connection is refused
        try await Task.sleep(for: .milliseconds(200))
        try Data("track".utf8).write(to: URL(fileURLWithPath: library + "/a.flac"))
        try await watch.waitFor("the refused upload") { $0.contains { $0["event"] as? String == "failed" } }
        try await Task.sleep(for: .seconds(2))
        #expect(watch.process.isRunning, "the watch stopped: \(watch.stderr) \(watch.stdout)")
        #expect(!watch.stderr.contains("is the server running?"), "\(watch.stderr)")
        watch.signal(SIGTERM)
        #expect(try await watch.exit() != 3)
    }

    @Test("a full pass every --rescan costs no request for unchanged files")
    func rescanIsFree() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library + "/A", withIntermediateDirectories: true)
        for name in ["A/1.flac", "A/2.flac", "3.flac"] {
            _ = FileManager.default.createFile(atPath: library + "/" + name, contents: Data(name.utf8))
            try Self.age(library + "/" + name)
        }
        try await Task.sleep(for: .milliseconds(2100))  // their ctime older than --min-age: the first pass takes them
        let database = folder.path + "/db.sqlite"
        let scope = prefix("rescan")
        let log = folder.path + "/requests.jsonl"
        let (proxy, server) = try await Self.loggingProxy(log: log)
        defer { proxy.stop() }
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--rescan", "1s"],
            environment: CLI.environment(server: server, home: folder.path), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        #expect(watch.events.first { $0["event"] as? String == "watching" }?["uploaded"] as? Int == 3)
        try await Task.sleep(for: .milliseconds(300))
        let before = Self.lines(log)
        #expect(before > 0)
        try await Task.sleep(for: .milliseconds(3500))  // three full passes
        #expect(Self.lines(log) == before)
        // A change is still seen by a full pass alone (a touch sends no close-write event).
        try Data("changed".utf8).write(to: URL(fileURLWithPath: library + "/3.flac.new"))
        try Self.age(library + "/3.flac.new")
        rename(library + "/3.flac.new", library + "/3.flac")
        try await watch.waitFor("the changed file") { events in
            events.count { $0["event"] as? String == "uploaded" && $0["key"] as? String == scope + "3.flac" } == 2
        }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
    }

    @Test("--delete-after removes each file once its upload is verified; --publish republishes the catalog when a batch settles")
    func deleteAfterAndPublish() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library + "/Album", withIntermediateDirectories: true)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("publish")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "500ms", "--delete-after", "--publish"],
            environment: try environment(folder), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        for name in ["Album/01 One.flac", "Album/02 Two.flac"] {
            _ = FileManager.default.createFile(atPath: library + "/" + name, contents: Data("audio \(name)".utf8))
        }
        try await watch.waitFor("the catalog") { events in
            events.count { $0["event"] as? String == "uploaded" } == 2 && events.contains { $0["event"] as? String == "published" }
        }
        #expect(watch.events.first { $0["event"] as? String == "published" }?["tracks"] as? Int == 2, "\(watch.events)")
        #expect(!FileManager.default.fileExists(atPath: library + "/Album/01 One.flac"))
        #expect(!FileManager.default.fileExists(atPath: library + "/Album/02 Two.flac"))
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope, hashes: false)
        #expect(state.objects.keys.sorted() == [scope + "Album/01 One.flac", scope + "Album/02 Two.flac", scope + "index.html", scope + "index.json"])
        #expect(state.objects[scope + "Album/01 One.flac"]?.size == "audio Album/01 One.flac".utf8.count)
    }

    @Test("--key-template: an album moved in gets the keys its tags make, as sync gives them")
    func keyTemplate() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let staging = folder.path + "/staging"
        let album = AudioCommandTests.library.filter { $0.name.hasPrefix("B/") }
        try await AudioCommandTests.make(album, in: staging)
        let database = folder.path + "/db.sqlite"
        let scope = prefix("template")
        let watch = try WatchProcess(
            ["watch", library, "--prefix", scope, "--db", database, "--json", "--min-age", "500ms", "--key-template", AudioCommandTests.template],
            environment: try environment(folder), in: folder.path)
        defer { watch.kill() }
        try await watch.waitFor("watching") { $0.contains { $0["event"] as? String == "watching" } }
        try FileManager.default.moveItem(atPath: staging + "/B", toPath: library + "/B")
        let expected = Set(AudioCommandTests.libraryKeys.filter { $0.hasPrefix("Björk/") }.map { scope + $0 })
        #expect(expected.count == 3)
        try await watch.waitFor("three uploads") { events in
            Set(events.compactMap { $0["event"] as? String == "uploaded" ? $0["key"] as? String : nil }) == expected
        }
        watch.signal(SIGTERM)
        #expect(try await watch.exit() == 0)
        let state = try await WatchState.read(database: database, prefix: scope, hashes: false)
        #expect(Set(state.objects.keys) == expected)
    }

    @Test("bad input: one line and exit 2; the lock held: exit 4")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        let env = try environment(folder)
        let db = folder.path + "/db.sqlite"
        let missing = try await CLI.run(["watch", folder.path + "/nope", "--db", db], environment: env)
        #expect(missing.status == 2 && missing.stderr == "r2up: \(folder.path)/nope: no such folder; give the folder to watch\n", "\(missing.stderr)")
        try FileManager.default.createDirectory(atPath: folder.path + "/a/b", withIntermediateDirectories: true)
        let nested = try await CLI.run(["watch", folder.path + "/a", folder.path + "/a/b", "--db", db], environment: env)
        #expect(nested.status == 2)
        #expect(nested.stderr == "r2up: \(folder.path)/a and \(folder.path)/a/b overlap (one holds the other); give each folder once\n")
        let rescan = try await CLI.run(["watch", folder.path + "/a", "--rescan", "0s", "--db", db], environment: env)
        #expect(rescan.status == 2 && rescan.stderr.contains("--rescan must be from 1s to 7d, got 0s"), "\(rescan.stderr)")
        let none = try await CLI.run(["watch", "--db", db], environment: env)
        #expect(none.status == 2)
        // A sync holds the lock: the watch exits 4 at once, naming it.
        let lock = open(db + ".sync-lock", O_RDWR | O_CREAT, 0o600)
        defer { close(lock) }
        flock(lock, LOCK_EX)
        _ = "4242\n".withCString { write(lock, $0, 5) }
        let held = try await CLI.run(["watch", folder.path + "/a", "--db", db], environment: env)
        #expect(held.status == 4)
        #expect(held.stderr == "r2up: another r2up sync (pid 4242) is running; use --wait to wait for it\n")
    }

    // MARK: helpers

    /// faultproxy in front of the test server, injecting nothing, logging every request.
    static func loggingProxy(log: String) async throws -> (HelperServer, [String: String]) {
        var server = try CLI.serverEnvironment()
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", (server["R2UP_ENDPOINT"] ?? "").replacingOccurrences(of: "http://", with: ""), "--max-seconds", "300",
             "--log", log, "--log-all"])
        server["R2UP_ENDPOINT"] = proxy.endpoint
        return (proxy, server)
    }

    static func requests(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    static func append(_ data: Data, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: data)
        try handle.close()
    }

    /// Bytes that differ from part to part (a part sent to the wrong place would show).
    static func pattern(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            bytes[index] = UInt8(truncatingIfNeeded: (index / 4) &* 2_654_435_761 >> (8 * (index % 4)))
        }
        return Data(bytes)
    }

    /// Moves a file's mtime a minute back (its ctime stays: --min-age still counts from now).
    static func age(_ path: String) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: path)
    }

    static func lines(_ path: String) -> Int {
        (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").count ?? 0
    }
}

/// A running `r2up watch`, its stdout and stderr going to files read as it runs.
final class WatchProcess: @unchecked Sendable {
    let process: Process
    let outPath: String
    let errPath: String
    var pid: Int32 { process.processIdentifier }

    /// - Parameter unprivileged: run it as nobody when the tests run as root (who reads anything).
    init(_ arguments: [String], environment: [String: String], in folder: String, unprivileged: Bool = false) throws {
        let tag = UUID().uuidString
        outPath = folder + "/watch-\(tag).out"
        errPath = folder + "/watch-\(tag).err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process = Process()
        if unprivileged && getuid() == 0 {
            // setpriv execs r2up: the pid signalled is r2up's.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
        }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
    }

    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// The JSON Lines events so far.
    var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    func waitFor(
        _ what: String, timeout: Duration = .seconds(30), _ condition: ([[String: Any]]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(events) { return }
            if !process.isRunning && !condition(events) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("r2up watch: no \(what) in \(timeout); stdout: \(stdout.suffix(2000)) stderr: \(stderr.suffix(2000))")
    }

    func waitForText(_ text: String, inStdout: Bool = false, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (inStdout ? stdout : stderr).contains(text) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("r2up watch: no '\(text)' in \(timeout); stdout: \(stdout) stderr: \(stderr)")
    }

    func signal(_ number: Int32) { Foundation.kill(process.processIdentifier, number) }

    /// The exit status, once it has exited (nil: still running after `timeout`, then killed).
    func exit(timeout: Duration = .seconds(20)) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            kill()
            return nil
        }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

/// What a watch left: history rows by key (sqlite3) and objects under the prefix (boto3).
struct WatchState: Decodable {
    struct Object: Decodable, Equatable {
        var size: Int
        var sha256: String?
    }
    var history: [String: Int]
    var objects: [String: Object]

    static func read(database: String, prefix: String, hashes: Bool = true) async throws -> WatchState {
        let script = """
            import boto3, hashlib, json, os, sqlite3, sys
            db, prefix, hashes = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
            con = sqlite3.connect(db)
            history = dict(con.execute("SELECT r2Key, count(*) FROM history WHERE r2Key LIKE ? || '%' GROUP BY r2Key", (prefix,)))
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            objects = {}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=e["R2UP_TEST_BUCKET"], Prefix=prefix):
                for o in page.get("Contents", []):
                    digest = None
                    if hashes:
                        digest = hashlib.sha256(s3.get_object(Bucket=e["R2UP_TEST_BUCKET"], Key=o["Key"])["Body"].read()).hexdigest()
                    objects[o["Key"]] = {"size": o["Size"], "sha256": digest}
            print(json.dumps({"history": history, "objects": objects}))
            """
        let result = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", script, database, prefix, hashes ? "1" : "0"],
            environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("reading the state failed: \(result.stderr)") }
        return try JSONDecoder().decode(WatchState.self, from: Data(result.stdout.utf8))
    }

    /// Parts recorded in the store (of unfinished multipart jobs).
    static func recordedParts(database: String) async throws -> Int {
        let result = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM parts').fetchone()[0])", database],
            environment: ProcessInfo.processInfo.environment)
        guard result.status == 0, let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError("reading the parts failed: \(result.stderr)")
        }
        return count
    }

    static func sha256(_ data: Data) -> String {
        let path = FileManager.default.temporaryDirectory.path + "/r2up-watch-hash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard (try? data.write(to: URL(fileURLWithPath: path))) != nil else { return "" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        guard (try? process.run()) != nil else { return "" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }
}
