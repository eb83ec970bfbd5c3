import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// A run killed in the middle of a multipart upload is continued by the next run.
@Suite("Resume after a crash")
struct ResumeTests {
    @Test("SIGKILL mid-upload of 200 MiB: the rerun completes without re-sending a recorded part")
    func killAndResume() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("resume")
        let directory = try TestDirectory()
        let file = try directory.makeFile("long mix.flac", size: 200 << 20, seed: 2026)
        let database = directory.path + "/r2up.sqlite"
        let key = scope + "long mix.flac"
        var environment = server.environment
        environment["HOME"] = directory.path

        // First run, slowed so it is surely mid-way when killed.
        let first = Process()
        first.executableURL = URL(fileURLWithPath: R2UpBinary.path)
        first.arguments = ["push", file.path, "--key", key, "--db", database, "--bwlimit", "10M", "--concurrency", "2"]
        first.environment = environment
        let firstLog = directory.path + "/first-run.log"
        _ = FileManager.default.createFile(atPath: firstLog, contents: nil)
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle(forWritingAtPath: firstLog)
        try first.run()
        // Polled and killed on a thread of its own: on a busy cooperative pool a sleeping test
        // woke only after the upload had finished.
        let recorded = try await offThePool { () -> [PartRecord] in
            var recorded: [PartRecord] = []
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && first.isRunning {
                usleep(100_000)
                if let store = try? Store(path: database), let job = try store.jobs(in: [.uploading]).first {
                    recorded = try store.parts(jobID: job.id)
                    if recorded.count >= 4 { break }
                }
            }
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            return recorded
        }
        let firstOutput = (try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? ""
        #expect(first.terminationReason == .uncaughtSignal, "the first run ended by itself: \(firstOutput)")
        #expect(recorded.count >= 4, "no parts were recorded before the kill: \(firstOutput)")
        let store = try Store(path: database)
        let job = try #require(try store.jobs(in: [.uploading]).first)
        let recordedNumbers = Set(try store.parts(jobID: job.id).map(\.partNumber))
        #expect(job.uploadID != nil)

        // Second run through a logging proxy: which parts does it send?
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        environment["R2UP_ENDPOINT"] = proxy.endpoint
        let second = try await Subprocess.run(
            R2UpBinary.path, ["push", file.path, "--key", key, "--db", database], environment: environment)
        #expect(second.status == 0, "stderr: \(second.stderrText)")
        #expect(second.stdoutText.hasSuffix("long%20mix.flac\n"))

        let sentParts = proxy.injectedFaults(includingClean: true).compactMap { entry -> Int? in
            guard entry["method"] as? String == "PUT", let target = entry["target"] as? String,
                let range = target.range(of: "partNumber=")
            else { return nil }
            return Int(target[range.upperBound...].prefix(while: \.isNumber))
        }
        #expect(!sentParts.isEmpty)
        #expect(Set(sentParts).isDisjoint(with: recordedNumbers), "re-sent recorded parts: \(Set(sentParts).intersection(recordedNumbers))")
        #expect(recordedNumbers.count + Set(sentParts).count >= 25)

        // The object is whole, recorded once, and nothing is left on the server.
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == file.sha256)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
        let reopened = try Store(path: database)
        #expect(try reopened.recentUploads(limit: 10).map(\.r2Key) == [key])
        #expect(try reopened.track(path: file.path)?.uploadState == .uploaded)
    }

    @Test("a file changed between runs is uploaded again from the start, never stitched")
    func changedBetweenRuns() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("restitch")
        let directory = try TestDirectory()
        let file = try directory.makeFile("take.wav", size: 30 << 20, seed: 5)
        let store = try Store(path: directory.path + "/r2up.sqlite")
        let service = try server.service()
        let queue = UploadQueue(store: store, service: service)
        let key = scope + "take.wav"
        // A previous run that got one part up, then stopped.
        let job = try await Intake(queue: queue).enqueue(PushRequest(path: file.path, key: key, attributes: ObjectAttributes())).job
        let uploadID = try await service.client.createMultipartUpload(bucket: server.bucket, key: key)
        let handle = try #require(FileHandle(forReadingAtPath: file.path))
        let md5 = try LocalFile(path: file.path).md5Base64(offset: 0, length: 8 << 20)
        let etag = try await service.client.uploadPart(
            bucket: server.bucket, key: key, uploadID: uploadID, partNumber: 1,
            body: FileSlice(descriptor: handle.fileDescriptor, offset: 0, length: 8 << 20), contentMD5: md5)
        _ = try store.updateJob(id: job.id) {
            // As the job's machine recorded CreateMultipartUpload's answer.
            $0.state = .initiated
            $0.uploadID = uploadID
            $0.partSize = 8 << 20
        }
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: etag, checksum: md5)
        // Now the file is rewritten with other bytes of the same size.
        let rewritten = try directory.makeFile("take.wav", size: 30 << 20, seed: 6)

        let summary = await queue.run([try #require(try store.job(id: job.id))])
        #expect(summary.failed.isEmpty, "\(summary.failed.map(\.diagnosis.message))")
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == rewritten.sha256)
        #expect(try await IndependentClient.pendingMultipartUploads(bucket: server.bucket, prefix: scope, server: server).isEmpty)
    }

    @Test("a run that died after CompleteMultipartUpload is recorded on the next run without sending anything")
    func diedAfterComplete() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("after-complete")
        let directory = try TestDirectory()
        let file = try directory.makeFile("set.flac", size: 12 << 20, seed: 12)
        let store = try Store(path: directory.path + "/r2up.sqlite")
        let service = try server.service()
        let key = scope + "set.flac"
        // A previous run: both parts sent and recorded, the upload completed, then it died.
        let queue = UploadQueue(store: store, service: service)
        let job = try await Intake(queue: queue).enqueue(PushRequest(path: file.path, key: key, attributes: ObjectAttributes())).job
        let uploadID = try await service.client.createMultipartUpload(bucket: server.bucket, key: key)
        _ = try store.updateJob(id: job.id) {
            // As the job's machine recorded CreateMultipartUpload's answer.
            $0.state = .initiated
            $0.uploadID = uploadID
            $0.partSize = 8 << 20
        }
        let handle = try #require(FileHandle(forReadingAtPath: file.path))
        var parts: [UploadedPart] = []
        for (number, offset, length) in [(1, Int64(0), Int64(8 << 20)), (2, Int64(8 << 20), Int64(4 << 20))] {
            let md5 = try LocalFile(path: file.path).md5Base64(offset: offset, length: length)
            let etag = try await service.client.uploadPart(
                bucket: server.bucket, key: key, uploadID: uploadID, partNumber: number,
                body: FileSlice(descriptor: handle.fileDescriptor, offset: offset, length: length), contentMD5: md5)
            try store.recordPart(jobID: job.id, partNumber: number, size: length, etag: etag, checksum: md5)
            parts.append(UploadedPart(partNumber: number, etag: etag, size: length))
        }
        _ = try await service.client.completeMultipartUpload(bucket: server.bucket, key: key, uploadID: uploadID, parts: parts)

        // The next run, through a logging proxy.
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        let proxied = try server.service(endpoint: proxy.endpoint)
        let summary = await UploadQueue(store: store, service: proxied).run([try #require(try store.job(id: job.id))])
        #expect(summary.failed.isEmpty, "\(summary.failed.map(\.diagnosis.message))")
        let methods = proxy.injectedFaults(includingClean: true).compactMap { $0["method"] as? String }
        #expect(!methods.contains("PUT") && !methods.contains("POST"), "sent again: \(methods)")
        #expect(try store.recentUploads(limit: 10).map(\.r2Key) == [key])
        #expect(try store.track(path: file.path)?.uploadState == .uploaded)
        let stored = try await IndependentClient.fetch([key], bucket: server.bucket, server: server)
        #expect(stored[key]?.sha256 == file.sha256)
    }
}

/// The built r2up binary, next to the test bundle.
enum R2UpBinary {
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("r2up").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("r2up").path
    }
}
