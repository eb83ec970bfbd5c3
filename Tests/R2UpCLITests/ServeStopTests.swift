import Foundation
import Testing
import R2UpTestSupport

/// `r2up serve`: SIGTERM ends it at once after the pages' actions.
extension ServeCommandTests {
    @Test("after a hundred actions that end at once, SIGTERM stops the server within two seconds, exit 0")
    func stopsPromptlyAfterActions() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        let group = music + "/S-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: group + "/s1.mp3", contents: Data(repeating: 3, count: 5000))
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let push = try await CLI.run(["push", group], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        // Upload All on a group with nothing left to upload: each POST starts a task that ends at
        // once. One that ended before the server had recorded it used to hold the stop 10 s.
        let script = """
            import http.client, re, sys, urllib.parse
            url, group = sys.argv[1], sys.argv[2]
            u = urllib.parse.urlsplit(url); origin = f"http://{u.netloc}"
            def go(method, path, body=None, cookie=None):
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
                h = {"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}
                if cookie: h["Cookie"] = cookie
                c.request(method, path, body=body, headers=h); r = c.getresponse(); data = r.read().decode()
                c.close()
                return r.status, (r.getheader("Set-Cookie") or "").split(";")[0], data
            cookie = go("GET", u.path + "?" + u.query)[1]
            page = go("GET", "/", cookie=cookie)[2]
            csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
            body = urllib.parse.urlencode({"csrf": csrf, "action": "upload-all", "group": group})
            print(" ".join(sorted({str(go("POST", "/action", body, cookie)[0]) for _ in range(100)})))
            """
        let run = try await Self.python(["-c", script, server.firstLine, "folder:" + group], environment: env)
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "303", "\(run.stdout) \(run.stderr)")
        let stopping = ContinuousClock.now
        let stopped = server.stop()
        let took = ContinuousClock.now - stopping
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(took < .seconds(2), "serve took \(took) to exit after SIGTERM")
    }
}
