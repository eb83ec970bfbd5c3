import Foundation
import Testing
import R2UpTestSupport

/// `r2up serve`: the queue's Cancel and a group's Retry Failed Uploads, the password's throttle, album art.
extension ServeCommandTests {
    @Test("the Queue cancels a job; Upload All on its group uploads both once the cause of the failure is gone")
    func cancelAndRetry() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        let group = music + "/Q-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        for name in ["q1.mp3", "q2.mp3"] { _ = FileManager.default.createFile(atPath: group + "/" + name, contents: Data(repeating: 9, count: 5000)) }
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        // The cause: a push with a wrong secret fails each file; the server has the right one.
        var wrong = env
        wrong["AWS_SECRET_ACCESS_KEY"] = "wrong-secret"
        let failed = try await CLI.run(["push", group], environment: wrong)
        #expect(failed.status != 0)
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        let script = """
            import json, sys, time
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            from selenium.webdriver.support import expected_conditions
            from selenium.webdriver.support.ui import WebDriverWait
            url, group = sys.argv[1], sys.argv[2]; origin = url.split("/?")[0]; seen = {}
            \(ServeCommandTests.headlessChrome)
            def entries():
                # One read inside the document: the live stream may redraw the list between WebDriver calls.
                return driver.execute_script(
                    'var m = {}; document.querySelectorAll("section.jobs li").forEach(function (e) {'
                    ' m[e.getAttribute("data-path").split("/").pop()] = Array.from(e.querySelectorAll("button"))'
                    '.map(function (b) { return b.textContent.trim(); }).sort(); }); return m;')
            def replaced(element):
                # Stale, or its document mid-replacement (Chromium's "does not belong to the document").
                try:
                    element.is_enabled()
                    return False
                except Exception:
                    return True
            def uploaded():
                try:
                    rows = driver.find_elements(By.CSS_SELECTOR, "li.track")
                    return len(rows) == 2 and all(r.get_attribute("data-icon") == "uploaded" for r in rows)
                except Exception:
                    return False
            try:
                driver.get(url)
                driver.get(origin + "/queue")
                seen["before"] = entries()
                job = driver.find_element(By.CSS_SELECTOR, 'section.jobs li[data-path$="/q1.mp3"]')
                job.find_element(By.XPATH, ".//button[normalize-space()='Cancel']").click()
                # The answer is a new page with the notice: wait for it, however loaded the machine.
                WebDriverWait(driver, 30).until(lambda d: replaced(job))
                WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.notice"))
                seen["afterCancel"] = entries()
                seen["cancelNotice"] = driver.execute_script('var e = document.querySelector("p.notice"); return e && e.textContent.trim()')
                driver.get(origin + "/")
                seen["icons"] = sorted(r.get_attribute("data-icon") for r in driver.find_elements(By.CSS_SELECTOR, "li.track"))
                driver.find_element(By.XPATH, "//section[@data-group='folder:" + group + "']//button[normalize-space()='Upload All to Cloud']").click()
                start = time.monotonic()
                while time.monotonic() - start < 60 and not uploaded():
                    time.sleep(0.1)
                seen["uploaded"] = uploaded()
                driver.get(origin + "/queue")
                # The live stream may redraw the counts while they are read: ask the document.
                seen["failedAfter"] = driver.execute_script('var e = document.querySelector("[data-count=failed]"); return e && e.textContent')
            finally:
                driver.quit()
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, group], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        let before = seen["before"] as? [String: [String]] ?? [:]
        #expect(before["q1.mp3"]?.contains("Cancel") == true && before["q2.mp3"]?.contains("Cancel") == true, "\(seen)")
        let afterCancel = seen["afterCancel"] as? [String: [String]] ?? [:]
        #expect(afterCancel["q1.mp3"] == nil && afterCancel["q2.mp3"] != nil, "\(seen)")
        #expect(seen["cancelNotice"] as? String == "Cancelled the upload.")
        #expect((seen["icons"] as? [String])?.contains("uploaded") == false, "\(seen)")
        #expect(seen["uploaded"] as? Bool == true, "\(seen)")
        #expect(seen["failedAfter"] as? String == "0", "\(seen)")
        let status = try await CLI.run(["status", group, "--json"], environment: env)
        #expect(status.stdout.contains("\"allUploaded\""), "\(status.stdout)")
    }

    @Test("ten wrong passwords within a minute slow the next tries to one a second; the right one still opens")
    func passwordThrottle() async throws {
        let folder = try TemporaryFolder()
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let file = folder.write("password", "correct horse\n")
        chmod(file, 0o600)
        let server = try Server([folder.path, "--listen", "127.0.0.1:0", "--password-file", file], environment: env)
        // Each try's status and seconds: ten wrong, an eleventh wrong, then the right one.
        let script = """
            import http.client, json, sys, time, urllib.parse
            u = urllib.parse.urlsplit(sys.argv[1]); origin = f"http://{u.netloc}"
            def go(password):
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                h = {"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}
                start = time.monotonic()
                c.request("POST", "/login", body="password=" + urllib.parse.quote_plus(password), headers=h)
                r = c.getresponse(); r.read()
                return [r.status, time.monotonic() - start]
            tries = [go("wrong %d" % n) for n in range(10)] + [go("wrong again"), go("correct horse")]
            print(json.dumps(tries))
            """
        let run = try await Self.python(["-c", script, server.firstLine], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0)
        let tries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[Double]], "\(run.stdout) \(run.stderr)")
        try #require(tries.count == 12)
        #expect(tries.prefix(11).allSatisfy { $0[0] == 401 } && tries[11][0] == 303, "\(tries)")
        // The first ten answer at once; the eleventh and the right one each wait their second.
        #expect(tries.prefix(10).allSatisfy { $0[1] < 0.9 }, "\(tries)")
        #expect(tries[10][1] >= 1.0 && tries[11][1] >= 1.0, "\(tries)")
    }

    @Test("a group's header shows its album art as a thumbnail; a group without art shows none; only the Library's groups")
    func albumArt() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        for name in ["With/w1.mp3", "Without/n1.mp3"] {
            let path = music + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 1000))
        }
        // A 1280×640 JPEG cover: its thumbnail is 80×40 (an eighth of it from the DC coefficients,
        // halved by the box filter to fit 128).
        let made = try await Subprocess.run("/usr/bin/env", [
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=1280x640",
            "-frames:v", "1", "-q:v", "3", music + "/With/cover.jpg",
        ])
        try #require(made.status == 0, "ffmpeg: \(made.stderrText)")
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        let script = """
            import http.client, json, struct, sys, time, urllib.parse
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            u = urllib.parse.urlsplit(sys.argv[1]); seen = {}
            \(ServeCommandTests.headlessChrome)
            try:
                driver.get(sys.argv[1]); time.sleep(1)
                for image in driver.find_elements(By.CSS_SELECTOR, "section.group img.art"):
                    group = image.find_element(By.XPATH, "ancestor::section").get_attribute("data-group")
                    seen[group] = [int(image.is_displayed()), driver.execute_script("return arguments[0].naturalWidth", image)]
                cookie = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
            finally:
                driver.quit()
            def get(path):
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                c.request("GET", path, headers={"Cookie": cookie}); r = c.getresponse(); data = r.read()
                return r.status, r.getheader("Content-Type"), data
            status, kind, data = get("/art?group=" + urllib.parse.quote("folder:" + sys.argv[2] + "/With", safe=""))
            seen["artStatus"], seen["artType"] = status, kind
            seen["artSize"] = list(struct.unpack(">II", data[16:24])) if data[:8] == b"\\x89PNG\\r\\n\\x1a\\n" else []
            seen["outside"] = get("/art?group=" + urllib.parse.quote("folder:/etc", safe=""))[0]
            seen["dotdot"] = get("/art?group=" + urllib.parse.quote("folder:" + sys.argv[2] + "/With/../..", safe=""))[0]
            seen["noGroup"] = get("/art")[0]
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, music], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        #expect(seen["folder:" + music + "/With"] as? [Int] == [1, 80], "\(seen)")
        #expect(seen["folder:" + music + "/Without"] as? [Int] == [0, 0], "\(seen)")
        #expect(seen["artStatus"] as? Int == 200 && seen["artType"] as? String == "image/png", "\(seen)")
        #expect(seen["artSize"] as? [Int] == [80, 40], "\(seen)")
        #expect(seen["outside"] as? Int == 404 && seen["dotdot"] as? Int == 404 && seen["noGroup"] as? Int == 400, "\(seen)")
    }
}
