import Foundation
import Testing
import R2UpModel
import R2UpStore
import R2UpTestSupport

/// `r2up serve`: an album group's header (its id holds the artist and the album) acts and
/// follows the live stream as a folder's does.
extension ServeCommandTests {
    @Test("an album header's Retry Failed and Offload act on the album; its summary follows another process's push live")
    func albumGroup() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        let tag = String(UUID().uuidString.prefix(8))
        let album = music + "/Alb-" + tag
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for (index, name) in ["s1.m4a", "s2.m4a", "s3.m4a"].enumerated() {
            let made = try await Subprocess.run("/usr/bin/env", [
                "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=\(700 + index * 100):duration=2",
                "-metadata", "title=S\(index + 1)", "-metadata", "artist=Srv Artist", "-metadata", "album=Srv Album " + tag,
                "-metadata", "track=\(index + 1)", album + "/" + name,
            ])
            try #require(made.status == 0, "ffmpeg: \(made.stderrText)")
        }
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        let prefix = "Alb-" + tag + "/"
        let pushed = try await CLI.run(["push", album + "/s1.m4a", "--prefix", prefix], environment: env)
        try #require(pushed.status == 0, "\(pushed.stderr)")
        // s2 and s3 failed (as `push` with a wrong secret leaves them, with their tags read): the
        // album shows Retry Failed Uploads.
        let store = try Store(path: folder.path + "/r2up.sqlite")
        for (index, name) in ["s2.m4a", "s3.m4a"].enumerated() {
            let path = album + "/" + name
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let mtimeNs = try StatusFiles.mtimeNs(path)
            try store.upsertTrack(path: path, size: Int64(size), mtimeNs: mtimeNs)
            try store.setUploadState(path: path, state: .error, error: "SignatureDoesNotMatch", cloud: nil)
            let tags = AudioTags(title: "S\(index + 2)", artist: "Srv Artist", album: "Srv Album " + tag, track: index + 2)
            try store.saveTags([(path, StoredTags(size: Int64(size), mtimeNs: mtimeNs, tags: tags))])
        }
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env)
        let script = """
            import html, http.client, json, re, subprocess, sys, time, urllib.parse
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            from selenium.webdriver.support.ui import WebDriverWait
            url, binary, album, prefix = sys.argv[1:5]; u = urllib.parse.urlsplit(url); origin = url.split("/?")[0]; seen = {}
            \(ServeCommandTests.headlessChrome)
            def section():
                return driver.find_element(By.CSS_SELECTOR, 'section.group[data-group^="album:"]')
            def replaced(element):
                try:
                    element.is_enabled()
                    return False
                except Exception:
                    return True
            def wait(predicate, limit):
                start = time.monotonic()
                while time.monotonic() - start < limit:
                    try:
                        if predicate():
                            return time.monotonic() - start
                    except Exception:
                        pass  # the page was replaced between finding and reading
                    time.sleep(0.05)
                return None
            def notice():
                found = driver.find_elements(By.CSS_SELECTOR, "p.notice")
                return found[0].text if found else None
            def post(fields):
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
                c.request("POST", "/action", urllib.parse.urlencode(fields), {
                    "Cookie": cookie, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"})
                r = c.getresponse(); r.read(); return r.status
            try:
                driver.get(url)
                group = section()
                seen["groupID"] = group.get_attribute("data-group")
                seen["hiddenValues"] = sorted({i.get_attribute("value") for i in group.find_elements(By.CSS_SELECTOR, "header input[name=group]")})
                seen["summaryBefore"] = group.get_attribute("data-summary")
                cookie = "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())
                csrf = group.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")
                # Live: another process uploads s3; the album's header follows without a reload.
                driver.execute_script("window.__r2upMark = 1")
                push = subprocess.run([binary, "push", album + "/s3.m4a", "--prefix", prefix], capture_output=True)
                seen["pushExit"] = push.returncode
                # The stream replays the push's states in order (↑ while it uploaded): wait for the last.
                seen["liveSeconds"] = wait(lambda: section().get_attribute("data-summary") == "⚠ 2/3", 30)
                seen["summaryLive"] = section().get_attribute("data-summary")
                seen["noReload"] = driver.execute_script("return window.__r2upMark") == 1
                # Retry Failed Uploads on the album's header: s2 is uploaded.
                group = section()
                group.find_element(By.XPATH, "./header//button[normalize-space()='Retry Failed Uploads']").click()
                WebDriverWait(driver, 30).until(lambda d: replaced(group))
                wait(lambda: notice() is not None or "No such" in driver.page_source, 30)
                seen["retryNotice"] = notice()
                seen["retrySeconds"] = wait(lambda: section().get_attribute("data-summary") == "↑", 60)
                # Offload on the album's header: all three files freed.
                group = section()
                group.find_element(By.XPATH, "./header//button[normalize-space()='Offload']").click()
                WebDriverWait(driver, 30).until(lambda d: replaced(group))
                wait(lambda: (notice() or "").startswith("Offloaded") or "No such" in driver.page_source, 30)
                seen["offloadNotice"] = notice()
            except Exception as error:
                # What was seen so far goes to the test's messages.
                seen["error"] = str(error).splitlines()[0]
            finally:
                driver.quit()
            # The form as the page posts it: the hidden value read from the served HTML.
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
            c.request("GET", "/", headers={"Cookie": cookie}); page = c.getresponse().read().decode()
            start = page.find('<section class="group" data-group="album:')
            hidden = re.search(r'name="group" value="([^"]*)"', page[start:]) if start >= 0 else None
            seen["uploadAllFromHTML"] = post({"csrf": csrf, "action": "upload-all", "group": html.unescape(hidden.group(1))}) if hidden else None
            # Never trusted: an unknown, malformed or old-style id is refused, and the server goes on.
            seen["unknown"] = post({"csrf": csrf, "action": "upload-all", "group": "album:Nobody/Nothing"})
            seen["malformed"] = post({"csrf": csrf, "action": "offload-all", "group": "album:%zz\\x00/%"})
            seen["separator"] = post({"csrf": csrf, "action": "offload-all", "group": "album:Srv Artist\\x1fSrv Album"})
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, CLI.binary, album, prefix], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        let id = "album:Srv Artist/Srv Album " + tag
        #expect(seen["groupID"] as? String == id, "\(seen)")
        #expect(seen["hiddenValues"] as? [String] == [id], "\(seen)")
        #expect(seen["summaryBefore"] as? String == "⚠ 1/3", "\(seen)")
        #expect(seen["pushExit"] as? Int == 0, "\(seen)")
        #expect(seen["liveSeconds"] is Double && seen["summaryLive"] as? String == "⚠ 2/3", "\(seen)")
        #expect(seen["noReload"] as? Bool == true, "\(seen)")
        #expect(seen["retryNotice"] as? String == "Uploading 1 track.", "\(seen)")
        #expect(seen["retrySeconds"] is Double, "\(seen)")
        #expect((seen["offloadNotice"] as? String)?.hasPrefix("Offloaded 3 tracks") == true, "\(seen)")
        for name in ["s1.m4a", "s2.m4a", "s3.m4a"] { #expect(!FileManager.default.fileExists(atPath: album + "/" + name), "\(name)") }
        #expect(seen["uploadAllFromHTML"] as? Int == 303, "\(seen)")
        #expect(seen["unknown"] as? Int == 404 && seen["malformed"] as? Int == 404 && seen["separator"] as? Int == 404, "\(seen)")
    }
}
