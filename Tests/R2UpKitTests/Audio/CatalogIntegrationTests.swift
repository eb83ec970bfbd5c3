import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// The catalog's conditional writes and its publisher against the real SeaweedFS.
@Suite("Catalog against a real S3 server")
struct CatalogIntegrationTests {
    @Test("If-None-Match: * and If-Match: a second writer gets 412, the one holding the ETag wins")
    func conditionalPut() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let key = server.scratchPrefix("cond") + "index.json"
        let client = service.client
        let first = try await client.putObjectIfUnchanged(
            bucket: server.bucket, key: key, bytes: Array("one".utf8), contentType: "application/json", cacheControl: nil, expectedETag: nil)
        #expect(first == "f97c5d29941bfb1b2fdab0874906ab82")  // MD5 of "one"
        await #expect(throws: S3ClientError.self) {
            _ = try await client.putObjectIfUnchanged(
                bucket: server.bucket, key: key, bytes: Array("two".utf8), contentType: "application/json", cacheControl: nil, expectedETag: nil)
        }
        do {
            _ = try await client.putObjectIfUnchanged(
                bucket: server.bucket, key: key, bytes: Array("two".utf8), contentType: "application/json", cacheControl: nil,
                expectedETag: "00000000000000000000000000000000")
            Issue.record("a stale ETag was accepted")
        } catch {
            guard case .service(let failure) = error else { throw error }
            #expect(failure.status == 412)
        }
        let second = try await client.putObjectIfUnchanged(
            bucket: server.bucket, key: key, bytes: Array("two".utf8), contentType: "application/json", cacheControl: nil, expectedETag: first)
        #expect(second == "b8a9f715dbb64fd5c56e7783c6820a61")  // MD5 of "two"
        let details = try #require(try await client.headObjectDetails(bucket: server.bucket, key: key))
        #expect(details.etag == second && details.size == 3 && details.contentType == "application/json")
    }

    @Test("two publishers at once, each with its own store and its own tracks: the index lists both")
    func concurrentPublishers() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let prefix = server.scratchPrefix("two-publishers")
        let client = service.client
        for (index, name) in ["a/1.mp3", "a/2.flac", "b/1.ogg", "b/2.opus"].enumerated() {
            var attributes = ObjectAttributes(contentType: "audio/mpeg")
            attributes.metadata = ["title": TagMetadata.encode("Tïtle \(index)"), "track": String(index + 1)]
            _ = try await client.putObject(
                bucket: server.bucket, key: prefix + name, body: .bytes(Array(repeating: UInt8(index), count: 64)),
                contentMD5: nil, attributes: attributes)
        }
        let folder = try ScratchFolder()
        let one = CatalogPublisher(service: service, store: try Store(path: folder.file("one.sqlite")))
        let two = CatalogPublisher(service: service, store: try Store(path: folder.file("two.sqlite")))
        async let first = one.publish(prefix: prefix)
        async let second = two.publish(prefix: prefix)
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.tracks == 4 && $0.heads == 4 })
        let sent = results.filter(\.jsonSent).count
        #expect(sent == 1)  // the other saw it there (or lost the race with a 412, rebuilt, and found it done)

        let sink = ResponseSink.memory(limit: 1 << 20)
        let response = try await client.getObject(bucket: server.bucket, key: prefix + "index.json", sink: sink)
        let index = try JSONDecoder().decode(CatalogIndex.self, from: Data(response.body))
        #expect(index.tracks.map(\.key) == ["a/1.mp3", "a/2.flac", "b/1.ogg", "b/2.opus"].map { prefix + $0 })
        #expect(index.tracks.map(\.title) == ["Tïtle 0", "Tïtle 1", "Tïtle 2", "Tïtle 3"])
        #expect(index.tracks.map(\.track) == [1, 2, 3, 4])
        #expect(index.tracks[0].url == service.publicURL(for: prefix + "a/1.mp3"))

        // Again from the first store: one listing, no HEAD, nothing sent.
        let again = try await one.publish(prefix: prefix)
        #expect(again == CatalogPublishResult(
            tracks: 4, heads: 0, jsonSent: false, htmlSent: false, retries: 0, indexURL: again.indexURL, jsonURL: again.jsonURL))
        // An object replaced: only it is read again.
        _ = try await client.putObject(bucket: server.bucket, key: prefix + "b/1.ogg", body: .bytes([9, 9]), contentMD5: nil)
        let changed = try await one.publish(prefix: prefix)
        #expect(changed.heads == 1 && changed.jsonSent && !changed.htmlSent)
    }

    @Test("a 412 on index.json (another publisher wrote first) makes it list again, rebuild and retry")
    func preconditionFailedRetries() async throws {
        let server = try TestServer.require()
        let prefix = server.scratchPrefix("412")
        let direct = try server.service()
        _ = try await direct.client.putObject(
            bucket: server.bucket, key: prefix + "a.mp3", body: .bytes([1, 2, 3]), contentMD5: nil,
            attributes: ObjectAttributes(metadata: ["title": "A"]))
        // The first PUT of index.json is answered 412 by the proxy, as S3 answers a lost If-Match.
        let proxy = try await FaultProxy(
            server: server,
            arguments: ["--log-all", "--only-methods", "PUT", "--path-regex", "index\\.json", "--script", "1=error:412:PreconditionFailed"])
        let service = try server.service(endpoint: proxy.endpoint)
        let folder = try ScratchFolder()
        let result = try await CatalogPublisher(service: service, store: try Store(path: folder.file("r2up.sqlite"))).publish(prefix: prefix)
        #expect(result.retries == 1 && result.jsonSent && result.htmlSent && result.tracks == 1 && result.heads == 1)
        let puts = proxy.injectedFaults(includingClean: true).filter { $0["method"] as? String == "PUT" && ($0["target"] as? String)?.contains("index.json") == true }
        #expect(puts.map { $0["fault"] as? String } == ["error", nil], "\(puts)")
        let index = try #require(try await service.client.headObjectDetails(bucket: server.bucket, key: prefix + "index.json"))
        #expect(index.contentType == "application/json")
    }
}
