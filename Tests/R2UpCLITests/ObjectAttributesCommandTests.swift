import Foundation
import Testing

/// Content type, Cache-Control and `--meta` as a reader of the bucket (boto3) sees them.
@Suite("Object attributes")
struct ObjectAttributesCommandTests {
    /// HEAD of each key by boto3: ContentType, CacheControl, Metadata.
    static func heads(_ keys: [String]) async throws -> [String: [String: Any]] {
        let script = """
            import boto3, json, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            out = {}
            for key in sys.argv[1:]:
                h = s3.head_object(Bucket=e["R2UP_TEST_BUCKET"], Key=key)
                out[key] = {"type": h.get("ContentType"), "cache": h.get("CacheControl"), "meta": h.get("Metadata", {})}
            json.dump(out, sys.stdout)
            """
        let result = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", script] + keys, environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("boto3 head failed: \(result.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]] ?? [:]
    }

    @Test("audio types from the extension, --content-type over them, --cache-control and --meta on every object")
    func attributes() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let prefix = "attributes-\(UUID().uuidString.prefix(8))/"
        let names = ["a.m4a", "b.MP3", "c.flac", "d.wav", "e.aiff", "f.ogg", "g.opus", "h.aac", "i.bin"]
        let files = names.map { folder.write($0, "x") }
        let push = try await CLI.run(
            ["push"] + files + ["--prefix", prefix, "--db", folder.path + "/db.sqlite", "--cache-control", "max-age=60",
             "--meta", "Artist=Nina", "--meta", "year=2026"], environment: env)
        #expect(push.status == 0, "\(push.stderr)")
        let forced = try await CLI.run(
            ["push", files[0], "--key", prefix + "forced.m4a", "--content-type", "audio/x-m4a", "--db", folder.path + "/db.sqlite"],
            environment: env)
        #expect(forced.status == 0, "\(forced.stderr)")

        let heads = try await Self.heads(names.map { prefix + $0 } + [prefix + "forced.m4a"])
        let types = names.map { heads[prefix + $0]?["type"] as? String ?? "?" }
        #expect(types == [
            "audio/mp4", "audio/mpeg", "audio/flac", "audio/wav", "audio/aiff", "audio/ogg", "audio/opus", "audio/aac",
            "application/octet-stream",
        ])
        #expect(heads[prefix + "forced.m4a"]?["type"] as? String == "audio/x-m4a")
        #expect(heads[prefix + "c.flac"]?["cache"] as? String == "max-age=60")
        #expect(heads[prefix + "c.flac"]?["meta"] as? [String: String] == ["artist": "Nina", "year": "2026"])
    }

    @Test("a --meta that is not KEY=VALUE, or holds a non-ASCII value, is bad input: exit 2, one line, nothing sent")
    func badMetadata() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let file = folder.write("a.m4a", "x")
        let noPair = try await CLI.run(["push", file, "--meta", "artist", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(noPair.status == 2)
        #expect(noPair.stderr.hasPrefix("Error: --meta 'artist' is not KEY=VALUE\n"))
        let accented = try await CLI.run(["sync", folder.path, "--meta", "artist=Zoë", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(accented.status == 2)
        #expect(accented.stderr.contains("--meta 'artist=Zoë': a value must be printable ASCII"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/db.sqlite"))
    }
}
