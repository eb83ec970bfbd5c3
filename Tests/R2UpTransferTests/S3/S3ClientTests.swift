import Foundation
import SigV4
import Testing
import R2UpTestSupport
@testable import R2UpTransfer

/// S3Client's calls against the real SeaweedFS: listings, ranges, deletes, multipart bookkeeping,
/// addressing styles, presigned URLs and clock-skew correction.
@Suite("S3Client against a real S3 server")
struct S3ClientTests {
    /// A client of its own (its own engine) for one test; call `engine.shutdown()` when done.
    static func client(
        _ server: TestServer, endpoint: String? = nil, addressing: S3Endpoint.Addressing = .pathStyle
    ) throws -> S3Client {
        S3Client(
            endpoint: try S3Endpoint(url: endpoint ?? server.endpoint, addressing: addressing), region: "us-east-1",
            credentials: Credentials(accessKeyID: server.accessKey, secretAccessKey: server.secretKey),
            engine: try TransferEngine())
    }

    /// Deterministic bytes: byte i is (i * 7 + seed) mod 251, so any offset error shows.
    static func pattern(_ count: Int, seed: Int = 3) -> [UInt8] {
        (0..<count).map { UInt8(($0 * 7 + seed) % 251) }
    }

    @Test("ListObjectsV2 with delimiter '/' gives the folders and the objects of one level")
    func listWithDelimiter() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let scope = server.scratchPrefix("list-delim")
        for name in ["b.m4a", "a.m4a", "album one/01.m4a", "album one/02.m4a", "album two/disc 1/01.flac"] {
            _ = try await client.putObject(
                bucket: server.bucket, key: scope + name, body: .bytes(Array(name.utf8)), contentMD5: nil)
        }

        let top = try await client.listObjects(bucket: server.bucket, prefix: scope, delimiter: "/")
        #expect(top.objects.map(\.key) == [scope + "a.m4a", scope + "b.m4a"])
        #expect(top.objects.map(\.size) == [5, 5])
        #expect(top.commonPrefixes == [scope + "album one/", scope + "album two/"])
        #expect(top.continuationToken == nil)

        let inner = try await client.listObjects(bucket: server.bucket, prefix: scope + "album two/", delimiter: "/")
        #expect(inner.objects.isEmpty)
        #expect(inner.commonPrefixes == [scope + "album two/disc 1/"])

        let flat = try await client.listObjects(bucket: server.bucket, prefix: scope)
        #expect(flat.commonPrefixes.isEmpty)
        #expect(flat.objects.count == 5)
    }

    @Test("ListObjectsV2 continues across pages: 1,100 keys are 1,000 then 100")
    func listContinuation() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let scope = server.scratchPrefix("list-pages")
        let keys = (0..<1100).map { scope + "obj-" + String(1_000_000 + $0).dropFirst() }
        // Uploaded concurrently through one client, 48 in flight at a time.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, key) in keys.enumerated() {
                if index >= 48 { try await group.next() }
                group.addTask {
                    _ = try await client.putObject(
                        bucket: server.bucket, key: key, body: .bytes(Array(String(index).utf8)), contentMD5: nil)
                }
            }
            try await group.waitForAll()
        }

        let first = try await client.listObjects(bucket: server.bucket, prefix: scope, maxKeys: 1000)
        #expect(first.objects.count == 1000)
        let token = try #require(first.continuationToken)
        let second = try await client.listObjects(
            bucket: server.bucket, prefix: scope, continuationToken: token, maxKeys: 1000)
        #expect(second.objects.count == 100)
        #expect(second.continuationToken == nil)
        let listed = first.objects + second.objects
        #expect(listed.map(\.key) == keys)
        #expect(listed.map(\.size) == (0..<1100).map { Int64(String($0).utf8.count) })
        #expect(listed.last?.key == scope + "obj-001099")
    }

    @Test("GetObject with a byte range returns exactly those bytes, into memory and into a file")
    func rangedGet() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("range") + "track.bin"
        let bytes = Self.pattern(100_000)
        _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes(bytes), contentMD5: nil)

        let memory = try await client.getObject(
            bucket: server.bucket, key: key, range: 1000...1999, sink: .memory(limit: 1 << 20))
        #expect(memory.status == 206)
        #expect(memory.header("content-range") == "bytes 1000-1999/100000")
        #expect(memory.body == Array(bytes[1000...1999]))

        let directory = try TestDirectory()
        let path = directory.path + "/part.bin"
        let descriptor = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        // Written at offset 10 of the file: the sink's offset is honoured too.
        let toFile = try await client.getObject(
            bucket: server.bucket, key: key, range: 99_000...99_999, sink: .file(descriptor: descriptor, offset: 10))
        #expect(toFile.status == 206)
        #expect(toFile.bodyBytesReceived == 1000)
        #expect(toFile.body.isEmpty)
        let written = try #require(FileManager.default.contents(atPath: path))
        #expect(written.count == 1010)
        #expect(Array(written.prefix(10)) == [UInt8](repeating: 0, count: 10))
        #expect(Array(written.dropFirst(10)) == Array(bytes[99_000...99_999]))
    }

    @Test("a range's reply with a chunk size 7 bytes too long fails the GET and writes nothing past the range")
    func rangeReplyLongerThanAsked() async throws {
        let server = try TestServer.require()
        let key = server.scratchPrefix("overrun") + "track.bin"
        let bytes = Self.pattern(100_000)
        let direct = try Self.client(server)
        defer { direct.engine.shutdown() }
        _ = try await direct.putObject(bucket: server.bucket, key: key, body: .bytes(bytes), contentMD5: nil)
        // mutateproxy's seed 365 at rate 0.5 sends the first reply chunked, its chunk size 7 too
        // large (the body, then "\r\n0\r\n\r\n" read as data): a random run's pull met it.
        let relay = try await FaultProxy(server: server, arguments: ["--seed", "365", "--rate", "0.5"], tool: "mutateproxy.py")
        defer { relay.process.terminate() }
        let client = try Self.client(server, endpoint: relay.endpoint)
        defer { client.engine.shutdown() }
        let directory = try TestDirectory()
        let path = directory.path + "/two-ranges.bin"
        // The next range's place already holds its bytes (fetched first, as parallel ranges may be).
        try Data(repeating: 0xAA, count: 2000).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDWR)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        await #expect(throws: S3ClientError.self) {
            _ = try await client.getObject(
                bucket: server.bucket, key: key, range: 1000...1999, sink: .file(descriptor: descriptor, offset: 0, limit: 1000))
        }
        let mutations = ((try? String(contentsOfFile: relay.logPath, encoding: .utf8)) ?? "")
        #expect(mutations.contains("\"wrong-size\""), "\(mutations)")
        let written = try #require(FileManager.default.contents(atPath: path))
        #expect(written.count == 2000 && Array(written.dropFirst(1000)) == [UInt8](repeating: 0xAA, count: 1000), "nothing written past the range")
    }

    @Test("DeleteObject removes the key: HeadObject then answers nil")
    func deleteThenHead() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("delete") + "gone.m4a"
        let etag = try await client.putObject(
            bucket: server.bucket, key: key, body: .bytes(Self.pattern(321)), contentMD5: nil,
            attributes: ObjectAttributes(contentType: "audio/mp4"))
        let before = try #require(try await client.headObject(bucket: server.bucket, key: key))
        #expect(before.size == 321)
        #expect(before.etag == etag)
        #expect(before.contentType == "audio/mp4")

        try await client.deleteObject(bucket: server.bucket, key: key)
        #expect(try await client.headObject(bucket: server.bucket, key: key) == nil)
        // Deleting a missing key is not an error (S3 answers 204 either way).
        try await client.deleteObject(bucket: server.bucket, key: key)
    }

    /// SeaweedFS (ServerProfile.echoesPartCRC32C) answers a part sent with no checksum header with
    /// the CRC-32C it computed, when the upload was created for CRC-32C; the engine computes the
    /// same over the bytes curl sent. Created without it, the reply has none: no checksum, not a pass.
    @Test("a part checksummed as it is sent: SeaweedFS's reply carries the same CRC-32C; without one, none")
    func partChecksummedInFlight() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("inflight") + "part.bin"
        let directory = try TestDirectory()
        let file = try directory.makeFile("part.bin", size: 6 << 20, seed: 31)
        let local = try LocalFile(path: file.path)
        let body = FileSlice(descriptor: local.descriptor, offset: 0, length: local.size)

        let uploadID = try await client.createMultipartUpload(bucket: server.bucket, key: key, check: .crc32c)
        let reply = try await client.uploadPartChecksummedInFlight(
            bucket: server.bucket, key: key, uploadID: uploadID, partNumber: 1, body: body)
        #expect(reply.checksum == .crc32c(try local.crc32cBase64(offset: 0, length: local.size)))
        try await client.abortMultipartUpload(bucket: server.bucket, key: key, uploadID: uploadID)

        let plain = try await client.createMultipartUpload(bucket: server.bucket, key: key, check: .md5)
        let unverified = try await client.uploadPartChecksummedInFlight(
            bucket: server.bucket, key: key, uploadID: plain, partNumber: 1, body: body)
        #expect(unverified.checksum == nil && !unverified.etag.isEmpty)
        try await client.abortMultipartUpload(bucket: server.bucket, key: key, uploadID: plain)
    }

    @Test("ListParts and ListMultipartUploads show an upload in progress; after abort it is gone")
    func multipartBookkeeping() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let scope = server.scratchPrefix("mpu")
        let key = scope + "big track.flac"
        let directory = try TestDirectory()
        let file = try directory.makeFile("parts.bin", size: 3000, seed: 9)
        let descriptor = open(file.path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }

        let uploadID = try await client.createMultipartUpload(bucket: server.bucket, key: key)
        #expect(!uploadID.isEmpty)
        let etag1 = try await client.uploadPart(
            bucket: server.bucket, key: key, uploadID: uploadID, partNumber: 1,
            body: FileSlice(descriptor: descriptor, offset: 0, length: 2000), contentMD5: nil)
        let etag2 = try await client.uploadPart(
            bucket: server.bucket, key: key, uploadID: uploadID, partNumber: 2,
            body: FileSlice(descriptor: descriptor, offset: 2000, length: 1000), contentMD5: nil)
        #expect(etag1 != etag2)

        let parts = try await client.listParts(bucket: server.bucket, key: key, uploadID: uploadID)
        #expect(
            parts == [
                UploadedPart(partNumber: 1, etag: etag1, size: 2000), UploadedPart(partNumber: 2, etag: etag2, size: 1000),
            ])
        let pending = try await client.listMultipartUploads(bucket: server.bucket, prefix: scope)
        #expect(pending.map(\.key) == [key])
        #expect(pending.map(\.uploadID) == [uploadID])
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server) == [key])

        try await client.abortMultipartUpload(bucket: server.bucket, key: key, uploadID: uploadID)
        #expect(try await client.listMultipartUploads(bucket: server.bucket, prefix: scope).isEmpty)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
        // Aborting again counts as done.
        try await client.abortMultipartUpload(bucket: server.bucket, key: key, uploadID: uploadID)
        #expect(try await client.headObject(bucket: server.bucket, key: key) == nil)
    }

    @Test("virtual-hosted addressing (bucket.localhost:PORT) round-trips put, head and get")
    func virtualHosted() async throws {
        let server = try TestServer.require()
        let port = try #require(URLComponents(string: server.endpoint)?.port)
        let client = try Self.client(server, endpoint: "http://localhost:\(port)", addressing: .virtualHosted)
        defer { client.engine.shutdown() }
        #expect(client.endpoint.authority(bucket: server.bucket) == "\(server.bucket).localhost:\(port)")
        let key = server.scratchPrefix("vhost") + "a b+c.m4a"
        #expect(client.endpoint.path(bucket: server.bucket, key: key) == "/" + key)
        let bytes = Self.pattern(4097, seed: 11)
        let etag = try await client.putObject(bucket: server.bucket, key: key, body: .bytes(bytes), contentMD5: nil)
        let info = try #require(try await client.headObject(bucket: server.bucket, key: key))
        #expect(info.size == 4097)
        #expect(info.etag == etag)
        let fetched = try await client.getObject(bucket: server.bucket, key: key, sink: .memory(limit: 1 << 20))
        #expect(fetched.body == bytes)
        // The object really is in the bucket: boto3 (path-style) reads the same bytes.
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.size == 4097)
        #expect(stored[key]?.sha256 == Digest.sha256Hex(bytes))
    }

    @Test("a presigned URL serves the bytes to curl; a tampered signature gets 403")
    func presigned() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("presign") + "mix (live) #1.m4a"
        let bytes = Self.pattern(5000, seed: 5)
        _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes(bytes), contentMD5: nil)

        let url = try client.presignedURL(bucket: server.bucket, key: key, expires: 300)
        #expect(url.hasPrefix(server.endpoint + "/" + server.bucket + "/"))
        #expect(url.contains("X-Amz-Expires=300"))
        let fetched = try await Subprocess.run("/usr/bin/curl", ["-fsS", url])
        #expect(fetched.status == 0, "curl: \(fetched.stderrText)")
        #expect(Array(fetched.stdout) == bytes)

        // Flip the signature's last hex digit.
        let last = try #require(url.last)
        let tampered = String(url.dropLast()) + (last == "0" ? "1" : "0")
        let denied = try await Subprocess.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", tampered])
        #expect(denied.stdoutText == "403")
    }

    // SeaweedFS 4.48 applies AWS's rule: a signature more than 15 minutes away from its clock is
    // refused with 403 RequestTimeTooSkewed and the server's Date header (measured: 16 min is
    // refused, 14 min accepted). One hour is well past it.
    static let skews: [TimeInterval] = [3600, -3600, 16 * 60]

    @Test("a client an hour off learns the server's time from RequestTimeTooSkewed (PUT)", arguments: skews)
    func clockSkewCorrectedOnPut(skew: TimeInterval) async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        client.adjustClock(serverDate: Date().addingTimeInterval(skew))
        #expect(abs(client.now.timeIntervalSinceNow - skew) < 5)
        let key = server.scratchPrefix("skew") + "t.bin"
        _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes([1, 2, 3]), contentMD5: nil)
        #expect(abs(client.now.timeIntervalSinceNow) < 5, "skew after correction: \(client.now.timeIntervalSinceNow)")
        #expect(try await client.headObject(bucket: server.bucket, key: key)?.size == 3)
    }

    @Test("a HEAD as the first call with a skewed clock still succeeds", arguments: skews)
    func clockSkewCorrectedOnHead(skew: TimeInterval) async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("skew-head") + "t.bin"
        _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes([9, 8]), contentMD5: nil)
        client.adjustClock(serverDate: Date().addingTimeInterval(skew))
        let info = try await client.headObject(bucket: server.bucket, key: key)
        #expect(info?.size == 2)
        #expect(abs(client.now.timeIntervalSinceNow) < 5, "skew after correction: \(client.now.timeIntervalSinceNow)")
    }

    @Test("a skew under the server's limit needs no correction")
    func smallSkewIsAccepted() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server)
        defer { client.engine.shutdown() }
        client.adjustClock(serverDate: Date().addingTimeInterval(14 * 60))
        let key = server.scratchPrefix("skew-small") + "t.bin"
        _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes([7]), contentMD5: nil)
        // 14 minutes is inside 15: the server took it as signed and the offset stands.
        #expect(abs(client.now.timeIntervalSinceNow - 14 * 60) < 5)
    }
}
