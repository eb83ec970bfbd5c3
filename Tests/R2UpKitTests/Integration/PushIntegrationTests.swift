import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
import R2UpTestSupport
@testable import R2UpTransfer

/// Uploads against the real SeaweedFS, each object read back by boto3 and compared byte for byte.
@Suite("Push against a real S3 server")
struct PushIntegrationTests {
    static let mebibyte = 1 << 20

    @Test("files of edge sizes arrive intact", arguments: [0, 1, 5 * mebibyte - 1, 5 * mebibyte, 8 * mebibyte + 1, 100 * mebibyte])
    func edgeSizes(size: Int) async throws {
        let server = try TestServer.require()
        let bucket = server.bucket
        let scope = server.scratchPrefix("size")
        let service = try server.service(bucket: bucket)
        let directory = try TestDirectory()
        let file = try directory.makeFile("track-\(size).m4a", size: size, seed: UInt64(size) + 7)
        let key = scope + "track-\(size).m4a"

        let outcome = try await service.upload(
            PushRequest(path: file.path, key: key, attributes: ObjectAttributes(contentType: "audio/mp4")))

        #expect(outcome.size == Int64(size))
        #expect(outcome.multipart == (size > 8 * Self.mebibyte))
        let stored = try await IndependentClient.fetch([key], bucket: bucket, server: server)
        #expect(stored[key] == .init(key: key, size: Int64(size), sha256: file.sha256))
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: bucket, prefix: scope, server: server).isEmpty)
    }

    static let specialKeys = [
        "with space/a b.m4a", "plus+sign.mp3", "100%.flac", "hash#tag.wav", "question?.ogg", "amp&and=eq.opus",
        "accénted/Ünïcödé.m4a", "emoji 🎵/track 🎧.m4a", "brackets [live] (2026).flac", "tilde~and'quote\".aac",
    ]

    @Test("any UTF-8 key round-trips, and its public URL serves the bytes")
    func specialKeysRoundTrip() async throws {
        let server = try TestServer.require()
        let bucket = server.bucket
        let scope = server.scratchPrefix("keys")
        let service = try server.service(bucket: bucket)
        let directory = try TestDirectory()
        let file = try directory.makeFile("small.bin", size: 3000, seed: 42)
        // The longest key: 1,024 bytes with the test's own prefix in front, in segments of at most
        // 201 bytes (SeaweedFS stores keys as paths and caps a segment at 255 bytes; R2 and S3 do not).
        var long = scope
        while long.utf8.count + 201 < 1024 { long += String(repeating: "x", count: 200) + "/" }
        long += String(repeating: "z", count: 1024 - long.utf8.count)
        let keys = Self.specialKeys.map { scope + $0 } + [long]
        for key in keys {
            _ = try await service.upload(PushRequest(path: file.path, key: key, attributes: ObjectAttributes()))
        }
        #expect(keys.last!.utf8.count == 1024)
        let stored = try await IndependentClient.fetch(keys, bucket: bucket, server: server)
        for key in keys {
            #expect(stored[key]?.sha256 == file.sha256, "key \(key)")
        }
        // Anonymous GET of the public URL, as a listener's browser would do it.
        let publicService = try UploadService(
            settings: server.settings(bucket: bucket), options: RunOptions())
        let url = PublicURL.make(key: scope + "emoji 🎵/track 🎧.m4a", bucket: bucket, publicBase: nil, endpoint: publicService.endpoint)
        let fetched = try await Subprocess.run("/usr/bin/curl", ["-fsS", "-o", directory.path + "/fetched", url])
        #expect(fetched.status == 0, "curl: \(fetched.stderrText)")
        #expect(FileManager.default.contentsEqual(atPath: directory.path + "/fetched", andPath: file.path))
    }

    @Test("a key named in NFD is stored under its NFC form")
    func keysAreNormalisedToNFC() async throws {
        let server = try TestServer.require()
        let bucket = server.bucket
        let scope = server.scratchPrefix("nfc")
        let service = try server.service(bucket: bucket)
        let directory = try TestDirectory()
        let file = try directory.makeFile("x.bin", size: 10)
        let nfd = scope + "Caf\u{0065}\u{0301}.m4a"
        let outcome = try await service.upload(PushRequest(path: file.path, key: nfd, attributes: ObjectAttributes()))
        #expect(outcome.key == scope + "Caf\u{00E9}.m4a")
        #expect(Array(outcome.key.utf8.suffix(9)) == [67, 97, 102, 0xC3, 0xA9, 46, 109, 52, 97])
        let stored = try await IndependentClient.fetch([scope + "Caf\u{00E9}.m4a"], bucket: bucket, server: server)
        #expect(stored.count == 1)
    }

    @Test("a file that changes during a multipart upload is not published and its upload is aborted")
    func changedFileIsAborted() async throws {
        let server = try TestServer.require()
        let bucket = server.bucket
        let scope = server.scratchPrefix("torn")
        var options = RunOptions()
        options.concurrency = 1
        let service = try server.service(options: options, bucket: bucket)
        let directory = try TestDirectory()
        let file = try directory.makeFile("growing.wav", size: 20 * Self.mebibyte)

        let journal = AppendOnFirstPart(path: file.path)
        await #expect(throws: UploadError.fileChanged(file.path)) {
            _ = try await service.upload(
                PushRequest(path: file.path, key: scope + "growing.wav", attributes: ObjectAttributes()), journal: journal)
        }
        #expect(try await IndependentClient.fetch([scope + "growing.wav"], bucket: bucket, server: server).isEmpty)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: bucket, prefix: scope, server: server).isEmpty)
    }

    @Test("a missing bucket and a wrong secret are configuration errors naming the problem")
    func configurationFailures() async throws {
        let server = try TestServer.require()
        let directory = try TestDirectory()
        let file = try directory.makeFile("a.m4a", size: 100)

        let missing = try UploadService(
            settings: server.settings(bucket: "no-such-bucket-\(UInt32.random(in: 0...UInt32.max))", asWriter: true), options: RunOptions())
        do {
            _ = try await missing.upload(PushRequest(path: file.path, key: "a.m4a", attributes: ObjectAttributes()))
            Issue.record("upload to a missing bucket succeeded")
        } catch {
            let diagnosis = await missing.diagnose(error, subject: file.path)
            #expect(diagnosis.category == .configuration)
            #expect(diagnosis.message.contains("NoSuchBucket"))
        }

        let wrong = try UploadService(settings: server.settings(secret: "not-the-secret"), options: RunOptions())
        do {
            _ = try await wrong.upload(PushRequest(path: file.path, key: "a.m4a", attributes: ObjectAttributes()))
            Issue.record("upload with a wrong secret succeeded")
        } catch {
            let diagnosis = Diagnosis(error)
            #expect(diagnosis.category == .configuration)
            #expect(diagnosis.message.contains("SignatureDoesNotMatch"))
            #expect(!diagnosis.message.contains("not-the-secret"))
        }
    }
}

/// Grows the file after the first part is recorded, as a tagger rewriting a track would.
final class AppendOnFirstPart: UploadJournal, @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var done = false

    init(path: String) { self.path = path }

    func multipartStarted(uploadID: String, partSize: Int64) async throws(JournalError) {}
    func bodySent(etag: String?) async throws(JournalError) {}
    func progress(bytesSent: Int64) {}
    func partFinished(_ part: UploadedPart, checksum: PayloadChecksum) async throws(JournalError) {
        let first = lock.withLock {
            defer { done = true }
            return !done
        }
        guard first, let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data("more".utf8))
        handle.closeFile()
    }
}

/// Bytes damaged in transit: the server must reject them and r2up must send them again.
@Suite("Integrity in transit")
struct IntegrityTests {
    @Test(
        "a flipped bit in a PUT or part body is rejected by the server and retried, with each checksum",
        arguments: [1000, 12 << 20], IntegrityCheck.allCases)
    func corruptedBodyIsRetried(size: Int, check: IntegrityCheck) async throws {
        let server = try TestServer.require()
        let bucket = server.bucket
        let scope = server.scratchPrefix("corrupt")
        let proxy = try await FaultProxy(server: server, arguments: ["--only-methods", "PUT", "--script", "1=corrupt-body,2=corrupt-body"])
        var options = RunOptions()
        options.upload.integrityCheck = check
        let service = try server.service(options: options, endpoint: proxy.endpoint, bucket: bucket)
        let directory = try TestDirectory()
        let file = try directory.makeFile("t.flac", size: size, seed: 99)

        _ = try await service.upload(PushRequest(path: file.path, key: scope + "t.flac", attributes: ObjectAttributes()))

        let faults = proxy.injectedFaults()
        let corrupted = Set(faults.filter { $0["fault"] as? String == "corrupt-body" }.compactMap { $0["req"] as? Int })
        #expect(corrupted.count == 2, "faults: \(faults)")
        let stored = try await IndependentClient.fetch([scope + "t.flac"], bucket: bucket, server: server)
        #expect(stored[scope + "t.flac"]?.sha256 == file.sha256)
    }

    @Test("a single PUT is confirmed by a HEAD by default, by the verified reply alone when asked", arguments: [true, false])
    func headAfterPut(head: Bool) async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("verify")
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        var options = RunOptions()
        options.upload.headAfterPut = head
        let service = try server.service(options: options, endpoint: proxy.endpoint)
        let directory = try TestDirectory()
        let file = try directory.makeFile("short.mp3", size: 3000, seed: 4)
        _ = try await service.upload(PushRequest(path: file.path, key: scope + "short.mp3", attributes: ObjectAttributes()))
        let methods = proxy.injectedFaults(includingClean: true).compactMap { $0["method"] as? String }
        #expect(methods == (head ? ["PUT", "HEAD"] : ["PUT"]))
        let stored = try await IndependentClient.fetch([scope + "short.mp3"], bucket: server.bucket, server: server)
        #expect(stored[scope + "short.mp3"]?.sha256 == file.sha256)
    }
}
