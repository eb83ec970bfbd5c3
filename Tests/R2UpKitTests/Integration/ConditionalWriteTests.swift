import Foundation
import SigV4
import Testing
@testable import R2UpKit
@testable import R2UpModel
import R2UpTestSupport
@testable import R2UpTransfer

/// Item 3 of issue 14: the server guards the key too. `If-None-Match: *` on a key r2up never
/// wrote, `If-Match` on one the track wrote; a 412 is a conflict, never retried, never an
/// overwrite. Against the real SeaweedFS, the bytes read back with boto3.
@Suite("Conditional writes against a real S3 server")
struct ConditionalWriteTests {
    /// An uploader that already knows it talks to SeaweedFS (as after a first reply), so the
    /// conditions go to the server with no HEAD first: what answers is the server's 412.
    static func uploader(_ service: UploadService, knowing profile: ServerProfile?, retry: RequestRetryPolicy? = nil) -> FileUploader {
        let cache = ServerProfileCache()
        if let profile { cache.learn(profile) }
        return FileUploader(
            client: service.client, settings: service.uploader.settings, slots: service.uploader.slots,
            retry: retry ?? service.uploader.retry, profile: cache)
    }

    @Test("a failed condition is a conflict and the object is untouched", arguments: [false, true])
    func serverRefuses(multipart: Bool) async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let directory = try TestDirectory()
        let size = multipart ? 9 << 20 : 3000
        let first = try directory.makeFile("first.m4a", size: size, seed: 1)
        let second = try directory.makeFile("second.m4a", size: size, seed: 2)
        let key = server.scratchPrefix("conditional") + "track.m4a"
        // A retry would wait 30 s first: a write that ends sooner was not retried, however slow
        // the server (a freshly started SeaweedFS took 3.5 s for a 3,000-byte PUT once).
        let uploader = Self.uploader(
            service, knowing: .seaweedFS, retry: RequestRetryPolicy(base: .seconds(30), cap: .seconds(30), random: { 1 }))
        let written = try await uploader.upload(
            try LocalFile(path: first.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(), condition: .absent)
        #expect(written.multipart == multipart)

        for condition in [WriteCondition.absent, .etag("0123456789abcdef0123456789abcdef")] {
            let started = ContinuousClock.now
            do {
                _ = try await uploader.upload(
                    try LocalFile(path: second.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(),
                    condition: condition)
                Issue.record("the write with \(condition) replaced the object")
            } catch {
                guard case .keyConflict(let conflictKey, let reason) = error else {
                    Issue.record("expected a key conflict, got \(error)")
                    continue
                }
                #expect(conflictKey == key)
                #expect(reason.contains("412 PreconditionFailed"))
                #expect(error.failureKind == .keyConflict)
            }
            // Never retried: the request-level backoff would take 30 s.
            #expect(ContinuousClock.now - started < .seconds(25))
        }
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == first.sha256)

        // The ETag the track recorded: the write goes through.
        let replaced = try await uploader.upload(
            try LocalFile(path: second.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(),
            condition: .etag(written.etag))
        #expect(replaced.size == Int64(size))
        #expect(try await IndependentClient.fetch([key], bucket: server.bucket, server: server)[key]?.sha256 == second.sha256)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: key, server: server).count <= 1)
    }

    @Test("where the server is not known to honour the headers, a HEAD refuses before anything is sent")
    func headBeforeSending() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let directory = try TestDirectory()
        let first = try directory.makeFile("first.m4a", size: 2000, seed: 3)
        let second = try directory.makeFile("second.m4a", size: 2000, seed: 4)
        let key = server.scratchPrefix("conditional-head") + "track.m4a"
        _ = try await Self.uploader(service, knowing: nil).upload(
            try LocalFile(path: first.path), bucket: server.bucket, key: key, attributes: ObjectAttributes())
        let unknown = Self.uploader(service, knowing: .unknown)
        await #expect(throws: UploadError.keyConflict(key: key, reason: "holds ETag \(try md5Hex(first.path)), not feedfacefeedfacefeedfacefeedface that r2up wrote: it changed behind r2up's back")) {
            _ = try await unknown.upload(
                try LocalFile(path: second.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(),
                condition: .etag("feedfacefeedfacefeedfacefeedface"))
        }
        #expect(try await IndependentClient.fetch([key], bucket: server.bucket, server: server)[key]?.sha256 == first.sha256)
    }

    @Test("HEAD first, an object at the key: this file's own bytes (a lost reply) are recorded, not sent again; other bytes are a conflict")
    func headFindsOwnBytes() async throws {
        let server = try TestServer.require()
        let service = try server.service()
        let directory = try TestDirectory()
        let file = try directory.makeFile("track.m4a", size: 5000, seed: 5)
        let other = try directory.makeFile("other.m4a", size: 5000, seed: 6)
        let key = server.scratchPrefix("conditional-own") + "track.m4a"
        // An earlier run's PUT that landed, its reply lost (Ctrl-C, kill -9): the store never recorded the key.
        let landed = try await Self.uploader(service, knowing: nil).upload(
            try LocalFile(path: file.path), bucket: server.bucket, key: key, attributes: ObjectAttributes())
        let unknown = Self.uploader(service, knowing: .unknown)
        let again = try await unknown.upload(
            try LocalFile(path: file.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(), condition: .absent)
        #expect(again.etag == landed.etag)
        #expect(again.bytesSent == 0)
        // Other bytes at the key: refused before sending, the object untouched.
        await #expect(throws: UploadError.keyConflict(key: key, reason: "already holds an object (ETag \(try md5Hex(file.path)))")) {
            _ = try await unknown.upload(
                try LocalFile(path: other.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(), condition: .absent)
        }
        #expect(try await IndependentClient.fetch([key], bucket: server.bucket, server: server)[key]?.sha256 == file.sha256)
        // Another track's upload at the key (--no-clobber, retry): the same bytes are not taken for this file's,
        // whether a HEAD or the server's 412 finds them.
        for knowing in [ServerProfile.unknown, .seaweedFS] {
            do {
                _ = try await Self.uploader(service, knowing: knowing).upload(
                    try LocalFile(path: file.path), bucket: server.bucket, key: key, attributes: ObjectAttributes(),
                    journal: KeyOfAnotherTrack(), condition: .absent)
                Issue.record("\(knowing): an object of another track was taken for this file's")
            } catch {
                guard case .keyConflict = error else {
                    Issue.record("\(knowing): expected a key conflict, got \(error)")
                    continue
                }
            }
        }
    }

    @Test("a first wave to a server no reply has named yet: one request names it, an object at a key is refused, never replaced")
    func firstWaveNamesTheServer() async throws {
        let server = try TestServer.require()
        let directory = try TestDirectory()
        let prefix = server.scratchPrefix("conditional-wave")
        let other = try directory.makeFile("other.m4a", size: 3000, seed: 40)
        // Another writer's object at one of the keys, put through another client.
        let another = try server.service()
        _ = try await Self.uploader(another, knowing: nil).upload(
            try LocalFile(path: other.path), bucket: server.bucket, key: prefix + "track 7.m4a", attributes: ObjectAttributes())
        let service = try server.service()
        #expect(service.client.server == nil)
        let uploader = Self.uploader(service, knowing: nil)
        let files = try (0..<20).map { try directory.makeFile("track \($0).m4a", size: 3000, seed: UInt64(50 + $0)) }
        let locals = try files.map { try LocalFile(path: $0.path) }
        let results = await withTaskGroup(of: (Int, UploadError?).self) { group in
            for (index, local) in locals.enumerated() {
                group.addTask {
                    do throws(UploadError) {
                        _ = try await uploader.upload(
                            local, bucket: server.bucket, key: prefix + "track \(index).m4a", attributes: ObjectAttributes(),
                            condition: .absent)
                        return (index, nil)
                    } catch { return (index, error) }
                }
            }
            return await group.reduce(into: [Int: UploadError?]()) { $0[$1.0] = $1.1 }
        }
        // The server's 412, or the HEAD's finding when this key's file was the one that named the server.
        guard case .keyConflict(_, let reason)?? = results[7] else { Issue.record("track 7: \(String(describing: results[7]))"); return }
        #expect(reason.contains("412 PreconditionFailed") || reason.contains("already holds an object (ETag"), "\(reason)")
        #expect(results.filter { $0.value != nil }.count == 1, "\(results)")
        #expect(uploader.profile.value == .seaweedFS)
        let keys = files.indices.map { prefix + "track \($0).m4a" }
        let stored = try await IndependentClient.fetch(keys, bucket: server.bucket, server: server)
        #expect(stored[prefix + "track 7.m4a"]?.sha256 == other.sha256)
        for index in files.indices where index != 7 { #expect(stored[keys[index]]?.sha256 == files[index].sha256) }
    }

    /// A journal for a job whose key holds another track's upload.
    struct KeyOfAnotherTrack: UploadJournal {
        func multipartStarted(uploadID: String, partSize: Int64) async throws(JournalError) {}
        func partFinished(_ part: UploadedPart, checksum: PayloadChecksum) async throws(JournalError) {}
        func bodySent(etag: String?) async throws(JournalError) {}
        func progress(bytesSent: Int64) {}
        var mayAdoptObjectAtKey: Bool { false }
    }

    @Test("a conflict is permanent: neither the request nor the job retries it")
    func conflictIsPermanent() {
        #expect(FailureKind.keyConflict.retryClass == .permanent)
        #expect(RequestRetryPolicy().delayBeforeRetry(.keyConflict, attempt: 1) == nil)
        let refused = S3ClientError.service(S3ServiceError(status: 412, code: "PreconditionFailed", message: ""))
        #expect(FileUploader.conflict(refused, key: "k", condition: .absent)
            == .keyConflict(key: "k", reason: "already holds an object (412 PreconditionFailed)"))
        // Without a condition sent, a 412 is whatever the server meant, not a key conflict.
        #expect(FileUploader.conflict(refused, key: "k", condition: nil) == .s3(refused))
        #expect(Diagnosis(UploadError.keyConflict(key: "k", reason: "already holds an object"), subject: "/m/a.m4a")
            == Diagnosis(category: .uploadFailed, message: "/m/a.m4a: the key 'k' already holds an object; not replaced (the overwrite option replaces it)"))
    }

    private func md5Hex(_ path: String) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return Digest.md5(bytes).map { String(format: "%02x", $0) }.joined()
    }
}
