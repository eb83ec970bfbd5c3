import Foundation
import Testing
import R2UpTestSupport

/// A CreateMultipartUpload that reached the server but whose reply was cut (issue 28, the open
/// upload the sync-under-faults test sometimes left): r2up aborts the upload it started and never
/// learnt the id of, and leaves other clients' uploads alone. The relay is tools/faultproxy.py in
/// front of SeaweedFS; the bucket is read with boto3.
@Suite("lost CreateMultipartUpload replies", .serialized)
struct LostCreateTests {
    /// Runs boto3 against the test server: `create KEY` prints a new upload id, `list PREFIX`
    /// prints "key<TAB>uploadId" per open upload under PREFIX.
    static func boto3(_ arguments: [String]) async throws -> String {
        try await Boto3Script.run(
            """
            if sys.argv[1] == "create":
                sys.stdout.write(s3.create_multipart_upload(Bucket=bucket, Key=sys.argv[2])["UploadId"])
            else:
                for u in s3.list_multipart_uploads(Bucket=bucket, Prefix=sys.argv[2]).get("Uploads", []):
                    sys.stdout.write("%s\\t%s\\n" % (u["Key"], u["UploadId"]))
            """, arguments)
    }

    @Test("the first Create reply cut after the server made the upload: exit 0, the object right, only other clients' uploads left open")
    func createReplyCut() async throws {
        let folder = try TemporaryFolder()
        var bytes = Data(count: 11 << 20)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12 &+ 7) }
        let source = folder.path + "/mix.flac"
        try bytes.write(to: URL(fileURLWithPath: source))
        let prefix = "lost-create/\(UInt32.random(in: 0...UInt32.max))"
        let key = prefix + "/mix.flac"
        // Another client's uploads: one to the same key, one to a key that starts with it. Made
        // seconds before r2up's, they are outside the window of its lost Create: never aborted.
        let foreign = try await Self.boto3(["create", key])
        let longer = try await Self.boto3(["create", key + ".bak"])
        try await Task.sleep(for: .seconds(4))

        let log = folder.path + "/relay.jsonl"
        let relay = try await HelperServer.start(
            "faultproxy.py",
            ["--upstream", try SoakFindingsTests.upstream(), "--only-methods", "POST", "--script", "1=reset-after",
             "--log", log, "--log-all", "--max-seconds", "300"])
        defer { relay.stop() }
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        env["R2UP_ENDPOINT"] = relay.endpoint
        let db = folder.path + "/db.sqlite"
        let push = try await CLI.run(["push", source, "--key", key, "--db", db, "--part-size", "5M"], environment: env)
        #expect(push.status == 0, "stdout: \(push.stdout) stderr: \(push.stderr)")

        let requests = SoakFindingsTests.faults(log)
        let creates = requests.filter {
            $0["method"] as? String == "POST" && ($0["target"] as? String ?? "").contains("?uploads") }
        #expect(creates.count == 2, "the cut Create, then the one r2up learnt the id of: \(creates)")
        #expect(creates.first?["fault"] as? String == "reset-after", "\(creates)")

        // No upload of r2up's left open; the other client's two untouched.
        let open = try await Self.boto3(["list", prefix + "/"]).split(separator: "\n").map(String.init).sorted()
        #expect(open == ["\(key)\t\(foreign)", "\(key).bak\t\(longer)"], "\(open)")
        let state = try await WatchState.read(database: db, prefix: prefix + "/")
        #expect(state.objects[key] == WatchState.Object(size: bytes.count, sha256: WatchState.sha256(bytes)), "\(state.objects)")
        let history = try await CLI.run(["history", "--db", db], environment: env)
        #expect(history.stdout.split(separator: "\n").filter { $0.contains(key) }.count == 1, "\(history.stdout)")
    }
}
