import Foundation
import Testing

/// One of the three real S3 implementations scripts/test.sh starts.
struct CoreServer: Sendable, CustomTestStringConvertible {
    var name: String
    var endpoint: String
    var accessKey: String
    var secretKey: String
    var bucket: String

    var testDescription: String { name }

    static let seaweedFS = "SeaweedFS"
    static let moto = "moto"
    /// MinIO's S3 code as `juicefs gateway` runs it (issue 28 item 7).
    static let minIO = "MinIO (juicefs gateway)"

    /// The servers, by name (the test arguments); `server(named:)` reads their settings.
    static let names = [seaweedFS, moto, minIO]

    static func named(_ name: String) throws -> CoreServer {
        let env = ProcessInfo.processInfo.environment
        if name == minIO {
            guard let endpoint = env["R2UP_TEST_MINIO_ENDPOINT"], let bucket = env["R2UP_TEST_MINIO_BUCKET"],
                let access = env["R2UP_TEST_MINIO_ACCESS_KEY"], let secret = env["R2UP_TEST_MINIO_SECRET_KEY"]
            else {
                throw HarnessError("no juicefs gateway: run the tests with scripts/test.sh, which starts one")
            }
            return CoreServer(name: name, endpoint: endpoint, accessKey: access, secretKey: secret, bucket: bucket)
        }
        if name == moto {
            guard let endpoint = env["R2UP_TEST_MOTO_ENDPOINT"], let bucket = env["R2UP_TEST_MOTO_BUCKET"] else {
                throw HarnessError("no moto server: run the tests with scripts/test.sh, which starts moto_server")
            }
            // moto takes any keys.
            return CoreServer(name: name, endpoint: endpoint, accessKey: "motokey", secretKey: "motosecret", bucket: bucket)
        }
        let server = try CLI.serverEnvironment()
        return CoreServer(
            name: name, endpoint: server["R2UP_ENDPOINT"] ?? "", accessKey: server["AWS_ACCESS_KEY_ID"] ?? "",
            secretKey: server["AWS_SECRET_ACCESS_KEY"] ?? "", bucket: server["R2UP_BUCKET"] ?? "")
    }

    /// r2up's environment for this server.
    func environment(home: String) -> [String: String] {
        var env = CLI.environment(home: home)
        env["R2UP_ENDPOINT"] = endpoint
        env["AWS_ACCESS_KEY_ID"] = accessKey
        env["AWS_SECRET_ACCESS_KEY"] = secretKey
        env["R2UP_BUCKET"] = bucket
        env["R2UP_PUBLIC_URL"] = "\(endpoint)/\(bucket)"
        env["TZ"] = "UTC"
        return env
    }

    /// Size and SHA-256 of every object under `prefix`, as boto3 lists and downloads them.
    func stored(under prefix: String) async throws -> [String: String] {
        let script = """
            import boto3, hashlib, json, sys
            from botocore.config import Config
            endpoint, access, secret, bucket, prefix = sys.argv[1:6]
            s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access, aws_secret_access_key=secret,
                              region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
            out = {}
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
                for o in page.get("Contents", []):
                    body = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
                    out[o["Key"]] = "%d:%s" % (len(body), hashlib.sha256(body).hexdigest())
            json.dump(out, sys.stdout)
            """
        let run = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", script, endpoint, accessKey, secretKey, bucket, prefix],
            environment: ProcessInfo.processInfo.environment)
        guard run.status == 0 else { throw HarnessError("boto3 failed: \(run.stderr)") }
        return try JSONDecoder().decode([String: String].self, from: Data(run.stdout.utf8))
    }
}

/// The core commands against the three real servers, SeaweedFS, moto and MinIO's code in
/// `juicefs gateway` (independent S3 implementations): what a user does first, checked with boto3. Suites that need another server
/// behaviour (the identity guards) take `CoreServer.names` as their arguments too.
@Suite("Core commands on SeaweedFS, moto and MinIO")
struct TwoServerCoreTests {
    static func fingerprint(_ data: Data) -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try? data.write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [file.path]
        let out = Pipe()
        process.standardOutput = out
        try? process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return "\(data.count):" + (text.split(separator: " ").first.map(String.init) ?? "")
    }

    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    @Test("push (single PUT and multipart, awkward keys), ls -r, presign, pull, history: the bytes boto3 reads back", arguments: CoreServer.names)
    func pushListPresignPullHistory(serverName: String) async throws {
        let server = try CoreServer.named(serverName)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-\(UUID().uuidString.prefix(8))/"
        let small = Self.bytes(70_000, seed: 1)
        let large = Self.bytes(11 << 20, seed: 2)
        let smallPath = folder.path + "/small.m4a"
        let largePath = folder.path + "/large.wav"
        try small.write(to: URL(fileURLWithPath: smallPath))
        try large.write(to: URL(fileURLWithPath: largePath))
        let awkward = prefix + "Ünïcødé & spaces/+plus %25 ?#[]=;,'!~*()@$ 日本.m4a"
        let multipartKey = prefix + "deep/er/large 100%.wav"

        let single = try await CLI.run(["push", smallPath, "--key", awkward, "--db", db], environment: env)
        #expect(single.status == 0, "\(single.stderr)")
        let multi = try await CLI.run(
            ["push", largePath, "--key", multipartKey, "--part-size", "5M", "--multipart-threshold", "5M", "--db", db],
            environment: env)
        #expect(multi.status == 0, "\(multi.stderr)")
        let stored = try await server.stored(under: prefix)
        #expect(stored == [awkward: Self.fingerprint(small), multipartKey: Self.fingerprint(large)])

        // ls -r: every object below the prefix, with sizes, and the total on stderr.
        let list = try await CLI.run(["ls", "-r", prefix], environment: env)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.contains { $0.hasSuffix("deep/er/large 100%.wav") && $0.contains(" 11 MB ") })
        #expect(lines.contains { $0.hasSuffix("+plus %25 ?#[]=;,'!~*()@$ 日本.m4a") })
        #expect(list.stderr == "2 objects, 11.1 MB in total\n", "\(list.stderr)")

        // presign: plain curl fetches the object with the URL alone.
        let presign = try await CLI.run(["presign", awkward, "--expires", "10m"], environment: env)
        #expect(presign.status == 0, "\(presign.stderr)")
        let url = presign.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let fetched = try await ProcessRunner.run("/usr/bin/curl", ["-fsS", "-o", folder.path + "/fetched", url], environment: [:])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(FileManager.default.contents(atPath: folder.path + "/fetched") == small)

        // pull: the prefix comes back byte for byte.
        let dest = folder.path + "/pulled"
        let pull = try await CLI.run(["pull", prefix, dest, "--db", db], environment: env)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(FileManager.default.contents(atPath: dest + "/deep/er/large 100%.wav") == large)

        // history: both uploads, found by a piece of the file name.
        let history = try await CLI.run(["history", "--all", "--grep", "LARGE 100", "--db", db], environment: env)
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.split(separator: "\n").count == 2)  // header and the one match
        #expect(history.stdout.contains(multipartKey))
    }

    @Test("sync uploads a folder once; a second run has nothing to do", arguments: CoreServer.names)
    func syncTwice(serverName: String) async throws {
        let server = try CoreServer.named(serverName)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-sync-\(UUID().uuidString.prefix(8))/"
        let tracks = folder.path + "/music"
        try FileManager.default.createDirectory(atPath: tracks + "/Live", withIntermediateDirectories: true)
        let a = Self.bytes(1000, seed: 3)
        let b = Self.bytes(2000, seed: 4)
        try a.write(to: URL(fileURLWithPath: tracks + "/a #1.m4a"))
        try b.write(to: URL(fileURLWithPath: tracks + "/Live/b.flac"))
        let first = try await CLI.run(["sync", tracks, "--prefix", prefix, "--min-age", "0", "--db", db], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try await server.stored(under: prefix) == [
            prefix + "a #1.m4a": Self.fingerprint(a), prefix + "Live/b.flac": Self.fingerprint(b),
        ])
        let second = try await CLI.run(
            ["sync", tracks, "--prefix", prefix, "--min-age", "0", "--db", db, "--json"], environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(summary["uploaded"] as? Int == 0, "\(second.stdout)")
        #expect(summary["unchanged"] as? Int == 2, "\(second.stdout)")
    }

    @Test("a renamed folder and a moved file: server-side copies, the same bytes at the new keys, the old ones kept", arguments: CoreServer.names)
    func syncMoves(serverName: String) async throws {
        let server = try CoreServer.named(serverName)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-moves-\(UUID().uuidString.prefix(8))/"
        let tracks = folder.path + "/music"
        try FileManager.default.createDirectory(atPath: tracks + "/Old Album", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tracks + "/Singles", withIntermediateDirectories: true)
        let a = Self.bytes(1000, seed: 5)
        let b = Self.bytes(9 << 20, seed: 6)  // multipart
        let c = Self.bytes(3000, seed: 7)
        try a.write(to: URL(fileURLWithPath: tracks + "/Old Album/01 a.m4a"))
        try b.write(to: URL(fileURLWithPath: tracks + "/Old Album/02 b.flac"))
        try c.write(to: URL(fileURLWithPath: tracks + "/c #1.mp3"))
        let sync = ["sync", tracks, "--prefix", prefix, "--min-age", "0", "--db", db, "--json"]
        #expect(try await CLI.run(sync, environment: env).status == 0)
        try FileManager.default.moveItem(atPath: tracks + "/Old Album", toPath: tracks + "/New Album")
        try FileManager.default.moveItem(atPath: tracks + "/c #1.mp3", toPath: tracks + "/Singles/c #1.mp3")

        let second = try await CLI.run(sync, environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(summary["copied"] as? Int == 3, "\(second.stdout)")
        #expect(summary["uploaded"] as? Int == 0, "\(second.stdout)")
        #expect(try await server.stored(under: prefix) == [
            prefix + "Old Album/01 a.m4a": Self.fingerprint(a), prefix + "Old Album/02 b.flac": Self.fingerprint(b),
            prefix + "c #1.mp3": Self.fingerprint(c),
            prefix + "New Album/01 a.m4a": Self.fingerprint(a), prefix + "New Album/02 b.flac": Self.fingerprint(b),
            prefix + "Singles/c #1.mp3": Self.fingerprint(c),
        ])
    }

    @Test("rm: keys and a prefix go from the bucket; tracks become local only; history says deleted", arguments: CoreServer.names)
    func remove(serverName: String) async throws {
        let server = try CoreServer.named(serverName)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-rm-\(UUID().uuidString.prefix(8))/"
        let files = ["one.m4a", "two.m4a", "three.m4a"].map { folder.write($0, "bytes of \($0)") }
        let push = try await CLI.run(["push"] + files + ["--prefix", prefix, "--db", db], environment: env)
        #expect(push.status == 0, "\(push.stderr)")

        let dry = try await CLI.run(["rm", prefix + "one.m4a", "--dry-run", "--db", db], environment: env)
        #expect(dry.status == 0)
        #expect(dry.stdout == "would delete \(prefix)one.m4a\n")
        #expect(try await server.stored(under: prefix).count == 3)

        let one = try await CLI.run(["rm", prefix + "one.m4a", "--db", db], environment: env)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout == "deleted \(prefix)one.m4a\n")
        #expect(try await server.stored(under: prefix).keys.sorted() == [prefix + "three.m4a", prefix + "two.m4a"])

        // A prefix off a terminal needs --yes: it lists, refuses with exit 2, and deletes nothing.
        let refused = try await CLI.run(["rm", "--prefix", prefix, "--db", db], environment: env)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("without --yes"))
        #expect(try await server.stored(under: prefix).count == 2)
        let all = try await CLI.run(["rm", "--prefix", prefix, "--yes", "--db", db], environment: env)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(try await server.stored(under: prefix).isEmpty)

        // History keeps all three rows, each saying its object was deleted.
        let history = try await CLI.run(["history", "--json", "--db", db], environment: env)
        let rows = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0["deletedAt"] is String })
        let table = try await CLI.run(["history", "--db", db], environment: env)
        #expect(table.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.contains("(deleted ") }, "\(table.stdout)")

        // The tracks are local only now: status draws no cloud mark for them and pushes them again.
        let status = try await CLI.run(["status", folder.path, "--json", "--db", db], environment: env)
        #expect(status.status == 0, "\(status.stderr)")
        let groups = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [[String: Any]] ?? []
        // status DIR lists every file push DIR would take: the store's own files sit in this folder too.
        let tracks = groups.flatMap { $0["tracks"] as? [[String: Any]] ?? [] }
            .filter { ($0["path"] as? String)?.hasSuffix(".m4a") == true }
        #expect(tracks.count == 3, "\(status.stdout)")
        #expect(tracks.allSatisfy { $0["icon"] as? String == "localOnly" && $0["key"] is NSNull }, "\(status.stdout)")
    }

    /// The methods r2up sent for one single-PUT push through a logging proxy in front of `server`.
    static func methods(pushing arguments: [String], to server: CoreServer) async throws -> [String] {
        let folder = try TemporaryFolder()
        let log = folder.path + "/requests.jsonl"
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server.endpoint.replacingOccurrences(of: "http://", with: ""), "--log-all", "--log", log,
             "--max-seconds", "120"])
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let file = folder.write("tone.m4a", "sixteen bytes...")
        let key = "core-verify-\(UUID().uuidString.prefix(8))/tone.m4a"
        let push = try await CLI.run(["push", file, "--key", key, "--db", folder.path + "/db.sqlite"] + arguments, environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        #expect(try await server.stored(under: key) == [key: Self.fingerprint(Data("sixteen bytes...".utf8))])
        let lines = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return lines.split(separator: "\n").compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["method"] as? String
        }
    }

    @Test("default: a single PUT whose checksum the server verifies (SeaweedFS) has no HEAD; moto, which verifies none, gets one")
    func singlePutConfirmation() async throws {
        let seaweed = try CoreServer.named(CoreServer.seaweedFS)
        let moto = try CoreServer.named(CoreServer.moto)
        // The first write of a run to a server known only by its replies' `Server` header asks
        // with a HEAD whether the key is free (issue 14: If-None-Match may be ignored there).
        #expect(try await Self.methods(pushing: [], to: seaweed) == ["HEAD", "PUT"])
        #expect(try await Self.methods(pushing: ["--verify", "head"], to: seaweed) == ["HEAD", "PUT", "HEAD"])
        #expect(try await Self.methods(pushing: [], to: moto) == ["HEAD", "PUT", "HEAD"])
        #expect(try await Self.methods(pushing: ["--verify", "reply"], to: moto) == ["HEAD", "PUT"])
        // With Content-MD5, the reply's ETag must be the MD5 of the bytes: both servers' ETags are.
        #expect(try await Self.methods(pushing: ["--checksum", "md5"], to: seaweed) == ["HEAD", "PUT"])
    }

    @Test("push --json has file, key, url, size, etag, id and the run's depth; a folder with nothing left says so; sync --dry-run --json says wouldUpload")
    func outputs() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-out-\(UUID().uuidString.prefix(8))/"
        let music = folder.path + "/music"
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        try Data("four".utf8).write(to: URL(fileURLWithPath: music + "/a.m4a"))

        let first = try await CLI.run(["push", music + "/", "--prefix", prefix, "--json", "--db", db], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1)
        #expect(rows.first.map { $0.keys.sorted() } == ["depth", "etag", "file", "id", "key", "size", "url"])
        let depth = rows.first?["depth"] as? [String: Any] ?? [:]
        #expect(depth["mode"] as? String == "adaptive" && (depth["settled"] as? Int ?? 0) >= 1, "the run's depth: \(depth)")
        #expect(rows.first?["file"] as? String == "a.m4a")
        #expect(rows.first?["key"] as? String == prefix + "a.m4a")

        let again = try await CLI.run(["push", music + "/", "--prefix", prefix, "--db", db], environment: env)
        #expect(again.status == 0)
        #expect(again.stdout.isEmpty)
        // The folder's line, then the folder push's summary (issue 29 item 5).
        #expect(
            again.stderr.hasPrefix(
                "\(music)/: nothing to upload (every track is uploaded and unchanged)\npush: 0 uploaded (0 bytes), 0 copied, 1 skipped (unchanged), 0 failed in "),
            "\(again.stderr)")

        try Data("new".utf8).write(to: URL(fileURLWithPath: music + "/b.m4a"))
        let dry = try await CLI.run(
            ["sync", music, "--prefix", prefix, "--dry-run", "--json", "--min-age", "0", "--db", folder.path + "/other.sqlite"],
            environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(summary["wouldUpload"] as? Int == 2)
        #expect(summary["wouldUploadBytes"] as? Int == 7)
        #expect(summary["uploaded"] as? Int == 0)
        #expect((summary["planned"] as? [Any])?.count == 2)
    }

    @Test("rm --prefix on a terminal lists, asks [y/N], and deletes only after a yes")
    func removeAsksOnATerminal() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let prefix = "core-ask-\(UUID().uuidString.prefix(8))/"
        let files = ["a.m4a", "b.m4a"].map { folder.write($0, "x") }
        let push = try await CLI.run(["push"] + files + ["--prefix", prefix, "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        var script = "#!/bin/sh\n"
        for (name, value) in env where name != "PATH" { script += "export \(name)='\(value)'\n" }
        script += """
            printf '\\033[H\\033[2J'
            '\(CLI.binary)' rm --prefix '\(prefix)' --db '\(folder.path)/db.sqlite'
            echo "NO=$?"
            '\(CLI.binary)' rm --prefix '\(prefix)' --db '\(folder.path)/db.sqlite'
            echo "YES=$?"
            exec sleep 600

            """
        let scriptPath = folder.path + "/session.sh"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let tmux = try await Tmux.start(width: 100, height: 30, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        _ = try await tmux.screens(until: "[y/N]", timeout: 60)
        try await tmux.type("n")
        let refused = try await tmux.screens(until: "NO=", timeout: 60).last ?? ""
        #expect(refused.contains("to delete: \(prefix)a.m4a") && refused.contains("Nothing deleted."), "\(refused)")
        #expect(try await server.stored(under: prefix).count == 2)
        _ = try await tmux.screens(until: "NO=0", timeout: 5)
        // The second run's question: the screen then holds two.
        var screen = ""
        for _ in 0..<600 where screen.components(separatedBy: "Delete these 2 objects? [y/N]").count < 3 {
            try await Task.sleep(for: .milliseconds(100))
            screen = try await tmux.capture()
        }
        #expect(screen.components(separatedBy: "Delete these 2 objects? [y/N]").count == 3, "\(screen)")
        try await tmux.type("y")
        let done = try await tmux.screens(until: "YES=", timeout: 60).last ?? ""
        #expect(done.contains("deleted \(prefix)b.m4a") && done.contains("YES=0"), "\(done)")
        #expect(try await server.stored(under: prefix).isEmpty)
    }

    @Test("moto stores a damaged body whatever Content-MD5 said; r2up refuses the ETag that is not the MD5 it sent")
    func damagedBodyOnMoto() async throws {
        let server = try CoreServer.named(CoreServer.moto)
        let folder = try TemporaryFolder()
        let proxy = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", server.endpoint.replacingOccurrences(of: "http://", with: ""), "--only-methods", "PUT",
             "--corrupt-body-rate", "1.0", "--max-seconds", "120"])
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let file = folder.write("tone.m4a", String(repeating: "a tone ", count: 200))
        let key = "core-damaged-\(UUID().uuidString.prefix(8))/tone.m4a"
        let push = try await CLI.run(
            ["push", file, "--key", key, "--checksum", "md5", "--verify", "reply", "--retries", "0", "--db", folder.path + "/db.sqlite"],
            environment: env)
        #expect(push.status == 1, "\(push.stderr)")
        #expect(push.stderr.contains("the MD5 of the bytes sent is"), "\(push.stderr)")
        #expect(push.stdout.isEmpty)
        let history = try await CLI.run(["history", "--json", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(history.stdout == "[]\n")
    }

    @Test("a key with control characters prints the same escaped way in ls, ls -r, history, pull, rm")
    func controlCharacters() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let env = server.environment(home: folder.path)
        let db = folder.path + "/db.sqlite"
        let prefix = "core-ctl-\(UUID().uuidString.prefix(8))/"
        let key = prefix + "red\u{1B}[31m\ttab.m4a"
        let shown = prefix + "red?[31m?tab.m4a"
        let file = folder.write("a.m4a", "x")
        let push = try await CLI.run(["push", file, "--key", key, "--db", db], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let below = String(shown.dropFirst(prefix.count))
        let ls = try await CLI.run(["ls", prefix], environment: env)
        let lsr = try await CLI.run(["ls", "-r", prefix], environment: env)
        let history = try await CLI.run(["history", "--db", db], environment: env)
        let pull = try await CLI.run(["pull", prefix, folder.path + "/pulled", "--db", db], environment: env)
        let dry = try await CLI.run(["rm", key, "--dry-run", "--db", db], environment: env)
        let rm = try await CLI.run(["rm", key, "--db", db], environment: env)
        #expect(ls.stdout.hasSuffix("  \(below)\n"), "\(ls.stdout)")
        #expect(lsr.stdout.hasSuffix("  \(below)\n"), "\(lsr.stdout)")
        #expect(history.stdout.contains("  \(shown)  "), "\(history.stdout)")
        #expect(pull.stdout == folder.path + "/pulled/" + below + "\n", "\(pull.stdout) \(pull.stderr)")
        #expect(dry.stdout == "would delete \(shown)\n")
        #expect(rm.stdout == "deleted \(shown)\n")
        for run in [ls, lsr, history, pull, dry, rm] {
            #expect(!run.stdout.contains("\u{1B}") && !run.stdout.contains("\t") && !run.stderr.contains("\u{1B}"))
        }
    }
}
