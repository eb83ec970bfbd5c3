import Foundation
import Testing
import R2UpTestSupport

/// `r2up serve`: a Library row's progress bar follows an upload another process makes.
extension ServeCommandTests {
    @Test("a push in another terminal: the row's bar shows the part sent while it uploads, then ↑ and no bar")
    func progressBar() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        let name = "P-" + String(UUID().uuidString.prefix(8))
        let file = music + "/" + name + "/big.mp3"
        try FileManager.default.createDirectory(atPath: music + "/" + name, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: file, contents: Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        let script = """
            import json, subprocess, sys, time
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            url, binary, path, prefix = sys.argv[1:5]; seen = {"samples": []}
            \(ServeCommandTests.headlessChrome)
            def sample():
                # One read inside the document: the live stream may redraw the row between WebDriver calls.
                return driver.execute_script(
                    'var r = document.querySelector("li.track"); var p = r.querySelector("progress.sent");'
                    ' return [r.getAttribute("data-icon"), p.hidden ? -1 : p.value];')
            try:
                driver.get(url)
                driver.execute_script("window.__r2upMark = 1")
                push = subprocess.Popen([binary, "push", path, "--prefix", prefix, "--bwlimit", "1M"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                start = time.monotonic()
                while time.monotonic() - start < 90:
                    now = sample()
                    if not seen["samples"] or seen["samples"][-1] != now:
                        seen["samples"].append(now)
                    if now[0] == "uploaded" and push.poll() is not None:
                        break
                    time.sleep(0.05)
                seen["pushExit"] = push.wait(30)
                seen["noReload"] = driver.execute_script("return window.__r2upMark") == 1
            finally:
                driver.quit()
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, CLI.binary, file, name + "/"], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        #expect(seen["pushExit"] as? Int == 0, "\(seen)")
        #expect(seen["noReload"] as? Bool == true, "\(seen)")
        let samples = (seen["samples"] as? [[Any]] ?? []).compactMap { s -> (String, Double)? in
            guard s.count == 2, let icon = s[0] as? String, let value = (s[1] as? NSNumber)?.doubleValue else { return nil }
            return (icon, value)
        }
        // While uploading, a bar with part of the file sent; at the end ↑ and the bar hidden.
        #expect(samples.contains { $0.0 == "uploading" && $0.1 > 0 && $0.1 < 100 }, "\(samples)")
        #expect(samples.last.map { $0.0 == "uploaded" && $0.1 == -1 } == true, "\(samples)")
    }
}
