import Foundation
import Testing
import R2UpTestSupport

/// `r2up serve`: Retry Failed Uploads after a failure of one file of a group, for a cause of its own.
extension ServeCommandTests {
    @Test("a file that cannot be read fails alone; once it can, Retry Failed Uploads puts its bytes in the bucket")
    func retryFailedPerFile() async throws {
        let folder = try TemporaryFolder()
        let music = folder.path + "/music"
        let name = "R-" + String(UUID().uuidString.prefix(8))
        let group = music + "/" + name
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: group + "/r1.mp3", contents: Data(repeating: 7, count: 5000))
        _ = FileManager.default.createFile(atPath: group + "/r2.mp3", contents: Data((0..<6000).map { UInt8($0 % 251) }))
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_DB"] = folder.path + "/r2up.sqlite"
        // The server runs as nobody, so a file with mode 000 is one it cannot read (root could):
        // a cause of that file's own, not of the run.
        let nobody = 65534
        let chown = try await ProcessRunner.run("/bin/chown", ["-R", "\(nobody):\(nobody)", folder.path], environment: [:])
        #expect(chown.status == 0, "\(chown.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: group + "/r2.mp3")
        // A push of the folder (as a cron sync would): r1 goes up, r2's job fails for its own cause.
        // (Named on the command line, an unreadable file is bad input instead: refused, nothing recorded.)
        let push = try await ProcessRunner.r2up(["push", group, "--prefix", name + "/"], environment: env, unprivileged: true)
        #expect(push.status == 1 && push.stderr.contains("r2.mp3: cannot be read"), "\(push.stderr)")
        let server = try Server([music, "--listen", "127.0.0.1:0"], environment: env, user: nobody)
        let script = """
            import json, os, sys, time
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            url, group = sys.argv[1], sys.argv[2]; seen = {}
            \(ServeCommandTests.headlessChrome)
            def icons():
                # One read inside the document: the live stream may redraw a row between WebDriver calls.
                return driver.execute_script(
                    'var m = {}; document.querySelectorAll("li.track").forEach(function (e) {'
                    ' m[e.getAttribute("data-path").split("/").pop()] = e.getAttribute("data-icon"); }); return m;')
            def button(label):
                return driver.find_element(By.XPATH, "//section[@data-group='folder:" + group + "']//header//button[normalize-space()='" + label + "']")
            def wait(want):
                start = time.monotonic()
                while time.monotonic() - start < 90 and icons() != want:
                    time.sleep(0.1)
                return icons()
            try:
                driver.get(url)
                seen["failed"] = icons()
                seen["retryShown"] = button("Retry Failed Uploads").is_displayed()
                seen["summary"] = driver.find_element(By.CSS_SELECTOR, "section.group").get_attribute("data-summary")
                seen["error"] = driver.execute_script(
                    'return document.querySelector("li.track[data-path$=\\\\"/r2.mp3\\\\"] [data-role=error]").textContent')
                # Upload while the cause remains: refused, and the notice says why.
                row = driver.find_element(By.CSS_SELECTOR, 'li.track[data-path$="/r2.mp3"]')
                row.find_element(By.XPATH, ".//button[normalize-space()='Upload']").click()
                start = time.monotonic()
                while time.monotonic() - start < 30 and not driver.find_elements(By.CSS_SELECTOR, "p.notice"):
                    time.sleep(0.1)
                seen["uploadNotice"] = driver.execute_script('var e = document.querySelector("p.notice"); return e && e.textContent.trim()')
                os.chmod(group + "/r2.mp3", 0o644)
                button("Retry Failed Uploads").click()
                seen["after"] = wait({"r1.mp3": "uploaded", "r2.mp3": "uploaded"})
                seen["retryShownAfter"] = button("Retry Failed Uploads").is_displayed()
            finally:
                driver.quit()
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, group], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        #expect(seen["failed"] as? [String: String] == ["r1.mp3": "uploaded", "r2.mp3": "uploadError"], "\(seen)")
        #expect(seen["retryShown"] as? Bool == true, "\(seen)")
        #expect(seen["summary"] as? String == "⚠ 1/2", "\(seen)")
        #expect((seen["error"] as? String)?.isEmpty == false, "\(seen)")
        #expect(seen["uploadNotice"] as? String == "Not uploaded: r2.mp3 cannot be read (Permission denied).", "\(seen)")
        #expect(seen["after"] as? [String: String] == ["r1.mp3": "uploaded", "r2.mp3": "uploaded"], "\(seen)")
        #expect(seen["retryShownAfter"] as? Bool == false, "\(seen)")
        // The bytes under the track's key are the file's, as boto3 reads them.
        let status = try await ProcessRunner.r2up(["status", group, "--json"], environment: env, unprivileged: true)
        let groups = try #require((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [[String: Any]], "\(status.stdout)")
        let tracks = groups.flatMap { $0["tracks"] as? [[String: Any]] ?? [] }
        let key = try #require(tracks.first { ($0["path"] as? String)?.hasSuffix("/r2.mp3") == true }?["key"] as? String, "\(status.stdout)")
        #expect(key.hasPrefix(name + "/"), "\(key)")
        let digest = try await Boto3Script.run(
            "import hashlib\nprint(hashlib.sha256(s3.get_object(Bucket=bucket, Key=sys.argv[1])['Body'].read()).hexdigest())", [key])
        let file = try await ProcessRunner.run("/usr/bin/sha256sum", [group + "/r2.mp3"], environment: [:])
        #expect(digest.trimmingCharacters(in: .whitespacesAndNewlines) == String(file.stdout.prefix(64)), "\(digest) \(file.stdout)")
    }
}
