import Foundation
import Testing
import R2UpTestSupport

/// `r2up serve`: Browse from a published catalog, and Play from a presigned URL.
extension ServeCommandTests {
    @Test("Browse goes artist → album → tracks by the published catalog; with no public URL base Play presigns, and its bytes are the file's")
    func browseCatalogPresigned() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try await AudioCommandTests.make(
            [
                .init(name: "B/a.flac", tags: ["title": "Human Behaviour", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "1"]),
                .init(name: "B/b.ogg", tags: ["title": "Venus as a Boy", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "2"]),
            ], in: lib)
        let prefix = "tests/serve-catalog-\(UInt32.random(in: 0...UInt32.max))/"
        var env = try AudioCommandTests.env(folder)
        env["R2UP_DB"] = folder.path + "/db.sqlite"
        let push = try await CLI.run(["push", lib, "--prefix", prefix], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let publish = try await CLI.run(["catalog", "publish", "--prefix", prefix], environment: env)
        #expect(publish.status == 0, "\(publish.stderr)")
        // No public URL base: the bucket is private, so Play must presign.
        env.removeValue(forKey: "R2UP_PUBLIC_URL")
        let server = try Server([lib, "--listen", "127.0.0.1:0"], environment: env)
        let script = """
            import hashlib, json, sys, time, urllib.parse, urllib.request
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            url, prefix = sys.argv[1], sys.argv[2]; origin = url.split("/?")[0]; seen = {}
            \(ServeCommandTests.headlessChrome)
            def links():
                return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "ul.folders a")]
            try:
                driver.get(url)
                driver.get(origin + "/browse?prefix=" + urllib.parse.quote(prefix))
                driver.find_element(By.LINK_TEXT, "By artist and album (the published catalog)").click()
                seen["artists"] = links()
                driver.find_element(By.LINK_TEXT, "Björk").click()
                seen["albums"] = links()
                driver.find_element(By.LINK_TEXT, "Début (1993)").click()
                seen["tracks"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "li.track .name")]
                sources = [b.get_attribute("data-src") for b in driver.find_elements(By.CSS_SELECTOR, "li.track button.play")]
                seen["sources"] = sources
                seen["sha256"] = [hashlib.sha256(urllib.request.urlopen(s, timeout=30).read()).hexdigest() for s in sources]
                driver.find_element(By.CSS_SELECTOR, "li.track button.play").click()
                start = time.monotonic()
                while time.monotonic() - start < 10 and not driver.execute_script('var p = document.getElementById("player"); return p && p.currentSrc'):
                    time.sleep(0.1)
                seen["playing"] = driver.execute_script('var p = document.getElementById("player"); return p && p.currentSrc')
            finally:
                driver.quit()
            print(json.dumps(seen))
            """
        let run = try await Self.python(["-c", script, server.firstLine, prefix], environment: env)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let seen = try #require((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any], "\(run.stdout) \(run.stderr)")
        #expect(seen["artists"] as? [String] == ["Björk"], "\(seen)")
        #expect(seen["albums"] as? [String] == ["Début (1993)"], "\(seen)")
        #expect(seen["tracks"] as? [String] == ["01 Human Behaviour", "02 Venus as a Boy"], "\(seen)")
        let sources = seen["sources"] as? [String] ?? []
        #expect(sources.count == 2 && sources.allSatisfy { $0.contains("X-Amz-Signature=") }, "\(seen)")
        #expect(seen["playing"] as? String == sources.first, "\(seen)")
        var files: [String] = []
        for name in ["B/a.flac", "B/b.ogg"] {
            let sum = try await ProcessRunner.run("/usr/bin/sha256sum", [lib + "/" + name], environment: [:])
            files.append(String(sum.stdout.prefix(64)))
        }
        #expect(seen["sha256"] as? [String] == files, "\(seen)")
    }
}
