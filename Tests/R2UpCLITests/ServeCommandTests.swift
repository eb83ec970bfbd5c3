import Foundation
import Testing
import R2UpModel
import R2UpStore
import R2UpTestSupport

/// `r2up serve`: the real binary against SeaweedFS, driven by headless Chromium
/// (Tests/Browser/serve_browser.py) and plain HTTP for the refusals.
@Suite("r2up serve", .serialized)
struct ServeCommandTests {
    /// The running server: its first stdout line, stopped by SIGTERM.
    final class Server: @unchecked Sendable {
        let process = Process()
        let out = Pipe()
        let err = Pipe()
        var firstLine = ""

        /// `user`: run as that user id (and group id) instead, through setpriv.
        init(_ arguments: [String], environment: [String: String], user: Int? = nil) throws {
            if let user {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--", CLI.binary, "serve"] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: CLI.binary)
                process.arguments = ["serve"] + arguments
            }
            process.environment = environment
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
            var bytes: [UInt8] = []
            let handle = out.fileHandleForReading
            // The URL comes once the port is bound; a byte at a time, so nothing after it is consumed.
            while bytes.last != 0x0A {
                let chunk = handle.readData(ofLength: 1)
                if chunk.isEmpty { break }
                bytes += chunk
            }
            firstLine = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
        }

        /// SIGTERM, then the exit status and what it printed to stderr.
        func stop() -> (status: Int32, stderr: String) {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: stderr, as: UTF8.self))
        }
    }

    /// The Python lines that start headless Chromium as `driver` (for the scripts the tests embed).
    static let headlessChrome = """
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        """

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Browser/serve_browser.py").path

    @Test("the Library shows status's icons and summaries, acts, follows another process live, refuses what it must")
    func browser() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        // Folder names of this run only: a new key never meets an object another test left.
        let tag = String(UUID().uuidString.prefix(8))
        let (a, b, c, d) = ("A-" + tag, "B-" + tag, "C-" + tag, "D-" + tag)
        for name in ["\(a)/a1.mp3", "\(a)/a2.mp3", "\(b)/b1.mp3", "\(b)/b2.mp3", "\(c)/c1.mp3", "\(d)/d1.mp3"] {
            let path = music + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: UInt8(name.utf8.count), count: 70_000))
        }
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        // A partly uploaded folder, a cloud-only track (its file deleted), a failed one; keys as
        // `push music` gives them.
        for path in ["\(a)/a1.mp3", "\(d)/d1.mp3"] {
            let push = try await CLI.run(
                ["push", music + "/" + path, "--prefix", (path as NSString).deletingLastPathComponent + "/"], environment: env)
            #expect(push.status == 0, "\(push.stderr)")
        }
        try FileManager.default.removeItem(atPath: music + "/\(d)/d1.mp3")
        let store = try Store(path: folder.path + "/r2up.sqlite")
        try store.upsertTrack(path: music + "/\(b)/b1.mp3", size: 70_000, mtimeNs: try StatusFiles.mtimeNs(music + "/\(b)/b1.mp3"))
        try store.setUploadState(path: music + "/\(b)/b1.mp3", state: .error, error: "SignatureDoesNotMatch", cloud: nil)
        let before = try await CLI.run(["status", music, "--json"], environment: env)
        #expect(before.status == 0, "\(before.stderr)")
        let du = try await CLI.run(["du", music, "--json"], environment: env)
        #expect(du.status == 0, "\(du.stderr)")

        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        #expect(server.firstLine.hasPrefix("http://127.0.0.1:"), "\(server.firstLine)")
        #expect(server.firstLine.contains("/?token="))
        let browser = try await Self.python(
            [
                Self.script, server.firstLine, "folder:" + music + "/" + b, music + "/\(c)/c1.mp3", c + "/", CLI.binary,
                music + "/\(d)/d1.mp3", music + "/\(a)/a1.mp3", music + "/\(c)/c1.mp3",
            ],
            environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(browser.status == 0, "\(browser.stderr)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(browser.stdout.utf8)) as? [String: Any], "\(browser.stdout)")

        // Seed 004's storage view: the totals `du --json` gives, in bytes.
        let duJSON = try #require(try JSONSerialization.jsonObject(with: Data(du.stdout.utf8)) as? [String: Any])
        let totals = try #require(duJSON["totals"] as? [String: Any])
        let space = try #require(seen["space"] as? [String: Any]).compactMapValues { $0 as? Int }
        #expect(space["tracks"] == totals["tracks"] as? Int)
        #expect(space["on-disk"] == totals["onDisk"] as? Int)
        #expect(space["in-bucket"] == totals["inBucket"] as? Int)
        #expect(space["local-only"] == totals["localOnly"] as? Int)
        #expect(space["cloud-only"] == totals["cloudOnly"] as? Int)
        #expect(space["both"] == totals["both"] as? Int)
        #expect((space["cloud-only"] ?? 0) > 0 && (space["both"] ?? 0) > 0 && (space["local-only"] ?? 0) > 0)

        // Icons and summaries as `status --json` gives them (before any action).
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(before.stdout.utf8)) as? [[String: Any]])
        var icons: [String: String] = [:]
        var summaries: [String: String] = [:]
        for group in groups {
            let folderName = try #require(group["folder"] as? String)
            let summary = try #require(group["summary"] as? [String: Any])
            summaries["folder:" + folderName] = Self.label(summary)
            for track in try #require(group["tracks"] as? [[String: Any]]) {
                icons[try #require(track["path"] as? String)] = track["icon"] as? String
            }
        }
        #expect(seen["rows"] as? [String: String] == icons)
        #expect(seen["groups"] as? [String: String] == summaries)
        #expect(icons[music + "/\(a)/a1.mp3"] == "uploaded" && icons[music + "/\(b)/b1.mp3"] == "uploadError")
        #expect(icons[music + "/\(d)/d1.mp3"] == "cloudOnly" && icons[music + "/\(c)/c1.mp3"] == "localOnly")
        #expect(summaries["folder:" + music + "/" + a] == "⇡ 1/2")
        #expect(summaries["folder:" + music + "/" + b] == "⚠ 0/2")

        // Every refusal, and the server kept serving.
        #expect(seen["noSession"] as? Int == 401)
        #expect(seen["wrongHost"] as? Int == 421)
        #expect(seen["tokenAgain"] as? Int == 403)
        #expect(seen["postWithoutCSRF"] as? Int == 403)
        #expect(seen["postOtherOrigin"] as? Int == 403)
        #expect(seen["mediaTraversal"] as? Int == 400)
        #expect(seen["mediaOutside"] as? Int == 404)
        #expect(seen["mediaDotDot"] as? Int == 400)
        #expect(seen["nonUTF8"] as? Int == 400)
        #expect(seen["bigBody"] as? Int == 413)
        #expect((seen["bigHeader"] as? Int).map { (400..<500).contains($0) } ?? (seen["bigHeader"] as? String == "closed"))
        #expect(seen["stillServing"] as? Int == 200)
        let secret = try #require(env["AWS_SECRET_ACCESS_KEY"])
        #expect(!(seen["pageSource"] as? String ?? secret).contains(secret))
        #expect(!stopped.stderr.contains(secret))

        // Upload All uploaded group B (its failed track too), shown without a reload.
        #expect(seen["uploadAllSeconds"] is Double, "\(seen["groupsAfter"] ?? "")")
        // Offload: the track's file is gone once its copy was verified, ☁ on the page and in
        // `status`; then the group's; a file edited since its upload is kept, with why.
        #expect(seen["offloadSeconds"] is Double, "\(seen["offloadNotice"] ?? "")")
        #expect(seen["offloadNotice"] as? String == "Offloaded 1 track (68.4 KB freed).")
        #expect(seen["offloadButtonsAfter"] as? [String] == ["Copy URL", "Download"])
        #expect(!FileManager.default.fileExists(atPath: music + "/\(a)/a1.mp3"))
        #expect(seen["groupOffloadNotice"] as? String == "Offloaded 2 tracks (136.7 KB freed).")
        #expect(seen["editedOffloadStatus"] as? Int == 303)
        #expect(seen["editedOffloadNotice"] as? String == "Offloaded 0 tracks (0 bytes freed). Kept 1: c1.mp3: changed since its upload.")
        let offloaded = seen["afterOffload"] as? [String: String] ?? [:]
        #expect(offloaded[music + "/\(b)/b1.mp3"] == "cloudOnly" && offloaded[music + "/\(a)/a1.mp3"] == "cloudOnly", "\(offloaded)")
        #expect(!FileManager.default.fileExists(atPath: music + "/\(b)/b1.mp3"))
        #expect(!FileManager.default.fileExists(atPath: music + "/\(b)/b2.mp3"))
        #expect(FileManager.default.fileExists(atPath: music + "/\(c)/c1.mp3"))
        let after = try await CLI.run(["status", music, "--json"], environment: env)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])
        let stateIcons = Dictionary(uniqueKeysWithValues: shown.flatMap { $0["tracks"] as? [[String: Any]] ?? [] }.compactMap { track in
            (track["path"] as? String).map { ($0, track["icon"] as? String ?? "") }
        })
        #expect(stateIcons[music + "/\(b)/b2.mp3"] == "cloudOnly" && stateIcons[music + "/\(a)/a1.mp3"] == "cloudOnly", "\(stateIcons)")
        // A push from another process: ↑ on the page without a reload, within a second of its exit.
        #expect(seen["pushExit"] as? Int == 0)
        #expect(seen["noReload"] as? Bool == true)
        #expect((seen["pushIcons"] as? [String])?.last == "uploaded")
        let lag = try #require(seen["exitToScreen"] as? Double)
        #expect(lag <= 1.0, "the page showed the push \(lag) s after it ended")
        // Copy URL gives the history's URL.
        let history = try await CLI.run(["history", "--json"], environment: env)
        let copied = try #require(seen["copyURL"] as? String)
        #expect(history.stdout.contains("\"" + copied + "\""), "\(copied) not in \(history.stdout)")
        // Download brought the cloud-only track back to its path, shown as downloaded.
        #expect(seen["downloadSeconds"] is Double, "\(seen["after"] ?? "")")
        #expect(FileManager.default.fileExists(atPath: music + "/\(d)/d1.mp3"))
        // Play gives the file's bytes; Browse lists the pushed track with its public URL to play.
        #expect(seen["playStatus"] as? Int == 200)
        #expect(seen["playSHA256"] as? String == seen["fileSHA256"] as? String)
        #expect(seen["browseSources"] as? [String] == [copied])
        let buttons = Set(seen["buttons"] as? [String] ?? [])
        #expect(buttons.isSuperset(of: ["Upload All to Cloud", "Upload", "Copy URL", "Download", "Offload", "Play"]), "\(buttons)")
    }

    /// `status --json`'s summary as the header's text ("↑ 12/18", "⇡ 1/2", "⚠ 1/2", "↑", "").
    static func label(_ summary: [String: Any]) -> String {
        let (uploaded, total) = (summary["uploaded"] as? Int ?? 0, summary["total"] as? Int ?? 0)
        switch summary["name"] as? String {
        case "uploading": return "↑ \(uploaded)/\(total)"
        case "error": return "⚠ \(uploaded)/\(total)"
        case "partial": return "⇡ \(uploaded)/\(total)"
        case "allUploaded": return "↑"
        default: return ""
        }
    }

    static func python(_ arguments: [String], environment: [String: String]) async throws -> CLI.Run {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                    process.arguments = ["python3"] + arguments
                    var env = environment
                    env["PATH"] = ProcessInfo.processInfo.environment["PATH"]
                    process.environment = env
                    let out = Pipe()
                    let err = Pipe()
                    process.standardOutput = out
                    process.standardError = err
                    try process.run()
                    let stdout = out.fileHandleForReading.readDataToEndOfFile()
                    let stderr = err.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    return CLI.Run(
                        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                        stderr: String(decoding: stderr, as: UTF8.self))
                })
            }
        }
    }

    @Test("with --password-file the URL is the login page; a wrong password is refused, the right one opens a session")
    func password() async throws {
        let folder = try TemporaryFolder()
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let file = folder.write("password", "correct horse\n")
        chmod(file, 0o600)
        let server = try Server([folder.path, "--listen", "127.0.0.1:0", "--password-file", file, "--json"], environment: env)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(server.firstLine.utf8)) as? [String: String])
        let url = try #require(line["url"])
        #expect(url.hasSuffix("/login") && !url.contains("token"), "\(url)")
        // One script: the page before logging in, a wrong password, the right one, the page after.
        let script = """
            import http.client, sys, urllib.parse
            u = urllib.parse.urlsplit(sys.argv[1]); origin = f"http://{u.netloc}"
            def go(method, path, body=None, cookie=None):
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                h = {"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}
                if cookie: h["Cookie"] = cookie
                c.request(method, path, body=body, headers=h); r = c.getresponse(); r.read()
                return r.status, (r.getheader("Set-Cookie") or "").split(";")[0]
            before = go("GET", "/")[0]
            wrong = go("POST", "/login", "password=nope")[0]
            status, cookie = go("POST", "/login", "password=correct+horse")
            print(before, wrong, status, go("GET", "/", cookie=cookie)[0])
            """
        let run = try await Self.python(["-c", script, url], environment: env)
        let stopped = server.stop()
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "303 401 303 200", "\(run.stdout) \(run.stderr)")
        #expect(stopped.status == 0)
        #expect(!stopped.stderr.contains("correct horse"))
    }

    @Test("bad flags, a taken port, a missing folder or password file: one line, exit 2, nothing listens")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let open = folder.write("open", "secret\n")
        chmod(open, 0o644)
        let empty = folder.write("empty", "")
        chmod(empty, 0o600)
        let server = try Server([folder.path, "--listen", "127.0.0.1:0"], environment: env)
        let taken = try #require(URLComponents(string: server.firstLine)?.port)
        let cases: [([String], String)] = [
            (["--listen", "nonsense"], "is not HOST:PORT"),
            (["--listen", "127.0.0.1:99999"], "the port must be"),
            (["--listen", "127.0.0.1:\(taken)"], "in use"),
            ([folder.path + "/missing"], "no such folder"),
            (["--listen", "0.0.0.0:0"], "needs --password-file"),
            (["--listen", "0.0.0.0:0", "--password-file", folder.path + "/none"], "does not exist"),
            (["--listen", "0.0.0.0:0", "--password-file", open], "readable by others"),
            (["--listen", "0.0.0.0:0", "--password-file", empty], "is empty"),
        ]
        for (arguments, words) in cases {
            let run = try await CLI.run(["serve"] + arguments, environment: env)
            #expect(run.status == 2, "\(arguments): \(run.status) \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments): \(run.stdout)")
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.count == 1 && run.stderr.contains(words), "\(arguments): \(run.stderr)")
        }
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }
}
