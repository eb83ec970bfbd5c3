import Foundation
import Testing
import R2UpModel

/// `r2up ls` and `r2up presign` against the real server; objects are made by boto3.
@Suite("r2up ls and presign")
struct BrowseCommandTests {
    /// Puts `objects` (key → text) with boto3, 16 at a time.
    static func put(_ objects: [String: String]) async throws {
        let script = """
            import boto3, json, os, sys
            from concurrent.futures import ThreadPoolExecutor
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            objects = json.load(sys.stdin)
            put = lambda item: s3.put_object(Bucket=e["R2UP_TEST_BUCKET"], Key=item[0], Body=item[1].encode())
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(put, objects.items()))
            """
        let input = try JSONSerialization.data(withJSONObject: objects)
        let path = FileManager.default.temporaryDirectory.path + "/objects-\(UUID().uuidString).json"
        try input.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await ProcessRunner.run(
            "/bin/sh", ["-c", "python3 -c '\(script)' < '\(path)'"], environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("boto3 put failed: \(result.stderr)") }
    }

    @Test("ls over 2,500 objects: one level at a time, folders first, every page read; --json lists the same")
    func lsManyObjects() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let top = "ls-tests-\(UUID().uuidString.prefix(8))/"
        var objects: [String: String] = [:]
        for index in 0..<2500 { objects[top + String(format: "many/item-%04d.bin", index)] = "abc" }
        objects[top + "Album/01 Intro.m4a"] = String(repeating: "x", count: 1234)
        objects[top + "Album/Live/02 Encore.flac"] = "y"
        objects[top + "top.m4a"] = "z"
        try await Self.put(objects)

        let level = try await CLI.run(["ls", top], environment: env)
        #expect(level.status == 0, "\(level.stderr)")
        let lines = level.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasSuffix("DIR  Album/") && lines[1].hasSuffix("DIR  many/"), "\(lines)")
        #expect(lines[2].hasSuffix("1 byte  top.m4a") && lines[2].hasPrefix("20"), "\(lines)")
        #expect(level.stderr == "2 folders, 1 object, 1 byte\n")

        let album = try await CLI.run(["ls", top + "Album"], environment: env)
        let albumLines = album.stdout.split(separator: "\n").map(String.init)
        #expect(albumLines.count == 2 && albumLines[0].hasSuffix("DIR  Live/") && albumLines[1].hasSuffix("  01 Intro.m4a"), "\(albumLines)")
        #expect(album.stderr == "1 folder, 1 object, \(ByteCount.string(1234))\n")

        let many = try await CLI.run(["ls", top + "many/"], environment: env)
        let names = many.stdout.split(separator: "\n").map { String($0.split(separator: " ").last ?? "") }
        #expect(names.count == 2500)
        #expect(names == (0..<2500).map { String(format: "item-%04d.bin", $0) })
        #expect(many.stderr == "0 folders, 2,500 objects, \(ByteCount.string(7500))\n")

        let json = try await CLI.run(["ls", top + "many/", "--json"], environment: env)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let listed = (decoded?["objects"] as? [[String: Any]])?.compactMap { $0["key"] as? String } ?? []
        #expect(Set(listed) == Set(objects.keys.filter { $0.hasPrefix(top + "many/") }))
        #expect((decoded?["objects"] as? [[String: Any]])?.first?["size"] as? Int == 3)
        #expect(decoded?["prefix"] as? String == top + "many/")
    }

    @Test("presign: curl fetches the object with the URL; it stops working after --expires; 8d is refused (exit 2)")
    func presign() async throws {
        let folder = try TemporaryFolder()
        let server = try CLI.serverEnvironment()
        let env = CLI.environment(server: server, home: folder.path)
        let key = "presign-tests-\(UUID().uuidString.prefix(8))/Late Night #2.m4a"
        try await Self.put([key: "the presigned bytes"])

        let signed = try await CLI.run(["presign", key, "--expires", "10m"], environment: env)
        #expect(signed.status == 0, "\(signed.stderr)")
        let url = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.contains("X-Amz-Expires=600") && !url.contains(server["AWS_SECRET_ACCESS_KEY"]!))
        let fetched = try await ProcessRunner.run("/usr/bin/env", ["curl", "-sS", "-f", url], environment: [:])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout == "the presigned bytes")

        let brief = try await CLI.run(["presign", key, "--expires", "1"], environment: env)
        try await Task.sleep(for: .seconds(3))
        let late = try await ProcessRunner.run(
            "/usr/bin/env", ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", brief.stdout.trimmingCharacters(in: .whitespacesAndNewlines)],
            environment: [:])
        #expect(late.stdout == "403")

        let tooLong = try await CLI.run(["presign", key, "--expires", "8d"], environment: env)
        #expect(tooLong.status == 2)
        #expect(tooLong.stderr.hasPrefix("Error: --expires must be from 1s to 7d (whole seconds), got 8d\n"))
    }
}
