import Foundation
import Synchronization
import Testing
@testable import R2UpKit
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// Issue 26, the start of a run: the request that names the server (whether it honours
/// `If-None-Match: *`) goes out before the first file is queued, once per run, and never where
/// the endpoint names the server. Against SeaweedFS, through faultproxy logging every request.
@Suite("The server named ahead of the first wave")
struct ServerNamingTests {
    /// `slowName`: the naming HEAD's reply comes a second late, so the first wave's writes (7
    /// beside the HEAD at a depth of 8) go out with their bodies held (`BodyGate`) and send them
    /// once the reply names SeaweedFS.
    @Test(
        "push: one HEAD of the bucket, asked before the first file is queued; the files go as conditional PUTs with no HEAD of their own",
        arguments: [(nil, false), (1, false), (8, true)] as [(Int?, Bool)])
    func pushNamesAhead(concurrency: Int?, slowName: Bool) async throws {
        let server = try TestServer.require()
        let stall = ["--only-methods", "HEAD", "--script", "1=stall", "--stall-seconds", "1"]
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"] + (slowName ? stall : []))
        let scope = server.scratchPrefix("named")
        let directory = try TestDirectory()
        var expected: [String: String] = [:]
        for index in 0..<30 {
            let name = String(format: "album/t%02d.bin", index)
            let file = try directory.makeFile(name, size: 2_000 + index, seed: UInt64(index + 70))
            expected[scope + String(name.dropFirst("album/".count))] = file.sha256
        }
        // Another writer's object at one key: the conditional PUT is refused, never replaced.
        let other = try directory.makeFile("other.bin", size: 500, seed: 99)
        let takenKey = scope + "t07.bin"
        let writer = try server.service()
        _ = try await writer.uploader.upload(
            try LocalFile(path: other.path), bucket: server.bucket, key: takenKey, attributes: ObjectAttributes())

        var options = RunOptions()
        options.concurrency = concurrency
        let service = try server.service(options: options, endpoint: proxy.endpoint)
        #expect(service.client.server == nil)
        let database = directory.path + "/r2up.sqlite"
        let runner = PushRunner(store: try Store(path: database), service: service)
        var request = PushRunner.Request(paths: [directory.path + "/album/"])
        request.prefix = scope
        let askedBeforeFirstJob = Mutex<Bool?>(nil)
        let notices = Mutex<[String]>([])
        let summary = try await runner.run(
            request, progress: nil,
            admit: { _ in
                // Asked already (or named): a second ask starts nothing.
                askedBeforeFirstJob.withLock { if $0 == nil { $0 = !service.uploader.nameServerAhead(bucket: server.bucket) } }
                return true
            },
            onNotice: { notice in notices.withLock { $0.append("\(notice)") } }, onEvent: { _ in })
        #expect(askedBeforeFirstJob.withLock { $0 } == true)
        #expect(summary.run.completed.count == 29, "\(summary.run.failed.map(\.diagnosis.message)) \(notices.withLock { $0 })")
        #expect(summary.run.failed.map(\.diagnosis.message).allSatisfy { $0.contains("t07.bin") }, "\(summary.run.failed)")
        #expect(service.uploader.profile.value == .seaweedFS)

        let requests = Self.requests(proxy)
        if slowName {
            // The first wave's PUT heads came in while the naming reply was held back (logged
            // when the server answered, sent a second later), and no PUT ended before it: the
            // bodies waited for the name, the connections and headers did not.
            let records = proxy.injectedFaults(includingClean: true)
            let naming = records.first { $0["fault"] as? String == "stall" }
            let answeredAt = try #require(naming?["t"] as? Double) + 1
            let puts = records.filter { $0["method"] as? String == "PUT" }
            #expect(puts.count == 30)
            let early = puts.filter { ($0["arrived"] as? Double ?? .infinity) < answeredAt - 0.5 }
            #expect(early.count == 7, "\(puts) \(answeredAt)")
            #expect(puts.allSatisfy { ($0["t"] as? Double ?? 0) >= answeredAt - 0.05 })
        } else {
            #expect(requests.first == "HEAD /\(server.bucket)/", "\(requests.prefix(3))")
        }
        // The refused key's own HEADs (after its 412: was it this file's bytes?) aside, no file sent a HEAD.
        let heads = requests.filter { $0.hasPrefix("HEAD") && !$0.hasSuffix("/t07.bin") }
        #expect(heads == ["HEAD /\(server.bucket)/"], "\(heads)")
        #expect(requests.filter { $0.hasPrefix("PUT") }.count == 30)
        let stored = try await IndependentClient.fetch(Array(expected.keys), bucket: server.bucket, server: server)
        for (key, sha256) in expected where key != takenKey { #expect(stored[key]?.sha256 == sha256, "\(key)") }
        #expect(stored[takenKey]?.sha256 == other.sha256)
    }

    @Test("nothing is sent where the endpoint names the server, a request of the run has asked, or the run overwrites")
    func nothingWhenKnown() async throws {
        let server = try TestServer.require()
        // Endpoints that name their server: R2 and S3 (nothing listens there; nothing is sent).
        for endpoint in ["https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com", "https://s3.eu-west-1.amazonaws.com"] {
            let service = try server.service(endpoint: endpoint)
            #expect(!service.nameServerAhead(replace: .guarded), "\(endpoint)")
            #expect(!service.uploader.nameServerAhead(bucket: server.bucket), "\(endpoint)")
        }
        // --overwrite: no write carries a condition, none waits for the name.
        let overwriting = try server.service()
        #expect(!overwriting.nameServerAhead(replace: .overwrite))

        // Once per run: a second ask sends nothing, and once named nothing more is asked.
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        let service = try server.service(endpoint: proxy.endpoint)
        #expect(service.uploader.nameServerAhead(bucket: server.bucket))
        #expect(!service.uploader.nameServerAhead(bucket: server.bucket))
        let deadline = ContinuousClock.now + .seconds(30)
        while service.client.server == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(service.client.server?.hasPrefix("SeaweedFS") == true)
        let fresh = try server.service(endpoint: proxy.endpoint)
        _ = await fresh.client.headBucketFailure(server.bucket)
        #expect(!fresh.uploader.nameServerAhead(bucket: server.bucket))
        #expect(Self.requests(proxy) == ["HEAD /\(server.bucket)/", "HEAD /\(server.bucket)/"])
    }

    /// The requests the proxy saw, in order, as "METHOD TARGET".
    private static func requests(_ proxy: FaultProxy) -> [String] {
        proxy.injectedFaults(includingClean: true).compactMap { record in
            guard let method = record["method"] as? String, let target = record["target"] as? String else { return nil }
            return "\(method) \(target)"
        }
    }
}
