import Foundation
import SigV4
import Synchronization
import Testing
@testable import R2UpKit
@testable import R2UpModel
import R2UpTestSupport
@testable import R2UpTransfer

/// Issue 14, item 4: a moved track's new key is a server-side copy. The request building and
/// the reply rules with exact values; CopyObject and UploadPartCopy against the real SeaweedFS.
@Suite("Server-side copies (moved tracks)")
struct ServerSideCopyTests {
    static func sha256(of path: String) throws -> String {
        var hasher = SHA256Hasher()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        data.withUnsafeBytes { hasher.update($0) }
        return hexString(hasher.finalize())
    }

    @Test("x-amz-copy-source: /bucket/key, every byte but '/' percent-encoded")
    func copySourceHeader() {
        #expect(CopySource(bucket: "music", key: "a/b.m4a").header.value == "/music/a/b.m4a")
        #expect(
            CopySource(bucket: "music", key: "New Album (2026)/01 - Café+?%#.m4a").header.value
                == "/music/New%20Album%20%282026%29/01%20-%20Caf%C3%A9%2B%3F%25%23.m4a")
        #expect(CopySource(bucket: "music", key: "x\u{1B}y").header.value == "/music/x%1By")
        #expect(CopySource(bucket: "b", key: "k").header.name == "x-amz-copy-source")
    }

    @Test("equal copy parts: the preferred size, whole MiB, raised so 10,000 parts cover the object")
    func copyPartPlans() throws {
        let six = try CopyPartPlan(size: 6 << 30, preferredPartSize: 512 << 20)
        #expect(six.partSize == 536_870_912)
        #expect(six.partCount == 12)
        #expect(six.range(ofPart: 1) == 0...536_870_911)
        #expect(six.range(ofPart: 12) == 5_905_580_032...6_442_450_943)
        // 5 TiB: 10,000 parts of 512 MiB hold 5,000 GiB, so the part grows to 525 MiB (whole MiB).
        let huge = try CopyPartPlan(size: 5 << 40, preferredPartSize: 512 << 20)
        #expect(huge.partSize == 550_502_400)
        #expect(huge.partCount == 9_987)
        #expect(huge.range(ofPart: 9_987).upperBound == (5 << 40) - 1)
        // Never under S3's 5 MiB minimum; the last part is what is left.
        let small = try CopyPartPlan(size: 12 << 20, preferredPartSize: 1 << 20)
        #expect(small.partSize == 5 << 20)
        #expect((1...small.partCount).map { small.range(ofPart: $0).count } == [5 << 20, 5 << 20, 2 << 20])
        #expect(throws: UploadError.invalidPartSize(0)) { try CopyPartPlan(size: 0, preferredPartSize: 5 << 20) }
    }

    @Test("UploadPartCopy's request: PUT ?partNumber&uploadId with the source and its inclusive range, signed")
    func uploadPartCopyRequest() throws {
        let client = S3Client(
            endpoint: try S3Endpoint(url: "https://acct.r2.cloudflarestorage.com"), region: "auto",
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: "secret"), engine: try TransferEngine())
        defer { client.engine.shutdown() }
        let call = S3Client.uploadPartCopyCall(
            bucket: "music", key: "New Album/01 a.flac", uploadID: "up/1+2", partNumber: 3,
            source: CopySource(bucket: "music", key: "Old Album/01 a.flac"), range: 1_073_741_824...1_610_612_735)
        #expect(call.method == "PUT")
        #expect(call.headers.map(\.name) == ["x-amz-copy-source", "x-amz-copy-source-range"])
        #expect(call.headers.map(\.value) == ["/music/Old%20Album/01%20a.flac", "bytes=1073741824-1610612735"])
        let signed = client.signedRequest(for: call, date: Date(timeIntervalSince1970: 1_790_000_000))
        #expect(signed.url == "https://acct.r2.cloudflarestorage.com/music/New%20Album/01%20a.flac?partNumber=3&uploadId=up%2F1%2B2")
        let authorization = signed.headers.first { $0.name.lowercased() == "authorization" }?.value ?? ""
        #expect(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-copy-source;x-amz-copy-source-range;x-amz-date"))
    }

    @Test("a copy's reply: the ETag inside; an <Error> in a 200 and a result without an ETag are failures")
    func copyReplies() throws {
        func reply(_ xml: String) -> HTTPResponse {
            let body = Array(xml.utf8)
            return HTTPResponse(status: 200, headers: [], body: body, bodyBytesReceived: Int64(body.count))
        }
        #expect(
            try S3Client.copyETag(
                reply("<CopyObjectResult><LastModified>x</LastModified><ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>"),
                root: "CopyObjectResult") == "9b2cf535f27731c974343645a3985328")
        #expect(try S3Client.copyETag(reply("<CopyPartResult><ETag>\"p1\"</ETag></CopyPartResult>"), root: "CopyPartResult") == "p1")
        do {
            _ = try S3Client.copyETag(
                reply("<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>"),
                root: "CopyObjectResult")
            Issue.record("an <Error> inside a 200 was taken as a copy")
        } catch {
            guard case .service(let failure) = error else { throw error }
            #expect(failure.code == "InternalError")
            #expect(failure.status == 200)
        }
        #expect(throws: S3ClientError.unexpectedResponse("the copy answered <CopyObjectResult> without an ETag")) {
            try S3Client.copyETag(reply("<CopyObjectResult><LastModified>x</LastModified></CopyObjectResult>"), root: "CopyObjectResult")
        }
        #expect(throws: S3ClientError.unexpectedResponse("expected <CopyObjectResult>, got <html>")) {
            try S3Client.copyETag(reply("<html>It works!</html>"), root: "CopyObjectResult")
        }
    }

    @Test("moves: same device and inode (size and mtime kept), else same size and digest; a changed file is no move")
    func movePlan() {
        func file(_ path: String, size: Int64, mtime: Int64, inode: Int64) -> ScannedFile {
            ScannedFile(path: path, relativePath: String(path.dropFirst(5)), size: size, mtimeNs: mtime, ctimeNs: mtime, device: 7, inode: inode)
        }
        func track(_ path: String, size: Int64, mtime: Int64, inode: Int64?, digest: String?) -> VanishedTrack {
            VanishedTrack(path: path, size: size, mtimeNs: mtime, key: String(path.dropFirst(5)), etag: "e", device: 7, inode: inode, digest: digest)
        }
        let renamed = PlannedUpload(file: file("/lib/new/a.m4a", size: 10, mtime: 100, inode: 1), key: "new/a.m4a", reason: .new)
        let copied = PlannedUpload(file: file("/lib/new/b.m4a", size: 20, mtime: 300, inode: 9), key: "new/b.m4a", reason: .new)
        let changed = PlannedUpload(file: file("/lib/new/c.m4a", size: 31, mtime: 400, inode: 3), key: "new/c.m4a", reason: .new)
        let other = PlannedUpload(file: file("/lib/new/d.m4a", size: 20, mtime: 500, inode: 10), key: "new/d.m4a", reason: .new)
        let vanished = [
            track("/lib/old/a.m4a", size: 10, mtime: 100, inode: 1, digest: nil),
            track("/lib/old/b.m4a", size: 20, mtime: 200, inode: 2, digest: "w:digest-b"),
            track("/lib/old/c.m4a", size: 30, mtime: 150, inode: 3, digest: "w:digest-c"),
        ]
        let hashed = Mutex<[String]>([])
        let result = MovePlan.match([renamed, copied, changed, other], vanished: vanished) { file, _ in
            hashed.withLock { $0.append(file.path) }
            return file.path == "/lib/new/b.m4a" ? "w:digest-b" : "w:other"
        }
        #expect(result.moves.map(\.upload.file.path) == ["/lib/new/a.m4a", "/lib/new/b.m4a"])
        #expect(result.moves.map(\.track.path) == ["/lib/old/a.m4a", "/lib/old/b.m4a"])
        #expect(result.uploads.map(\.file.path) == ["/lib/new/c.m4a", "/lib/new/d.m4a"])
        // Only files of a vanished track's size are read; d's candidate was taken already.
        #expect(hashed.withLock { $0 } == ["/lib/new/b.m4a"])
    }

    @Test("a file's content digest is the one its upload recorded, single PUT and multipart alike")
    func contentDigests() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let directory = try TestDirectory()
        for size in [3000, 9 << 20] {
            let made = try directory.makeFile("digest-\(size).m4a", size: size, seed: 5)
            let file = try LocalFile(path: made.path)
            let outcome = try await service.uploader.upload(
                file, bucket: server.bucket, key: server.scratchPrefix("digest") + "\(size).m4a", attributes: ObjectAttributes())
            let recorded = try #require(outcome.digest)
            #expect(recorded.hasPrefix(size > 8 << 20 ? "p:crc32c:8388608:" : "w:c"))
            #expect(try ContentDigest.of(try LocalFile(path: made.path), like: recorded) == recorded)
            let other = try directory.makeFile("other-\(size).m4a", size: size, seed: 6)
            #expect(try ContentDigest.of(try LocalFile(path: other.path), like: recorded) != recorded)
        }
    }

    @Test("CopyObject, and UploadPartCopy in equal parts above a lowered copyThreshold: the same bytes, nothing sent")
    func copiesOnTheServer() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let directory = try TestDirectory()
        let scope = server.scratchPrefix("copy")
        let made = try directory.makeFile("twelve.flac", size: 12 << 20, seed: 9)
        let source = try await service.uploader.upload(
            try LocalFile(path: made.path), bucket: server.bucket, key: scope + "old.flac", attributes: ObjectAttributes())
        var settings = service.uploader.settings
        settings.copyThreshold = 6 << 20
        settings.copyPartSize = 5 << 20
        for (label, uploader) in [
            ("parts", FileUploader(client: service.client, settings: settings, slots: service.uploader.slots)),
            ("whole", service.uploader),
        ] {
            let copy = try await uploader.copy(
                from: CopySource(bucket: server.bucket, key: scope + "old.flac"), sourceETag: source.etag, size: 12 << 20,
                to: scope + "new-\(label).flac", bucket: server.bucket, attributes: ObjectAttributes(), condition: .absent)
            #expect(copy.bytesSent == 0)
            #expect(copy.multipart == (label == "parts"))
            #expect(copy.partCount == (label == "parts" ? 3 : 1))
            let sink = try directory.makeFile("back-\(label)", size: 0)
            let descriptor = open(sink.path, O_WRONLY)
            defer { close(descriptor) }
            _ = try await service.client.getObject(
                bucket: server.bucket, key: scope + "new-\(label).flac", sink: .file(descriptor: descriptor, offset: 0))
            #expect(try Self.sha256(of: sink.path) == made.sha256)
            // The key is taken now: a second copy in parts onto it is a conflict. A second CopyObject
            // finds the source's size and ETag there, what a copy whose reply was lost leaves (the
            // soak's finding), and takes it as that copy. Either way the object is untouched.
            let again = { () async throws(UploadError) -> UploadOutcome in
                try await uploader.copy(
                    from: CopySource(bucket: server.bucket, key: scope + "old.flac"), sourceETag: source.etag, size: 12 << 20,
                    to: scope + "new-\(label).flac", bucket: server.bucket, attributes: ObjectAttributes(), condition: .absent)
            }
            if label == "parts" {
                await #expect(throws: UploadError.self) { _ = try await again() }
            } else {
                #expect(try await again().etag == copy.etag)
            }
            let info = try await service.client.headObject(bucket: server.bucket, key: scope + "new-\(label).flac")
            #expect(info?.etag == copy.etag && info?.size == 12 << 20)
        }
        // The source gone: a failure that says so, not a success.
        await #expect(throws: UploadError.self) {
            _ = try await service.uploader.copy(
                from: CopySource(bucket: server.bucket, key: scope + "missing.flac"), sourceETag: nil, size: 3,
                to: scope + "never.flac", bucket: server.bucket, attributes: ObjectAttributes())
        }
    }
}
