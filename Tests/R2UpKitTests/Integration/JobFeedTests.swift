import Foundation
import Synchronization
import Testing
@testable import R2UpKit
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// A run that starts while its folder is still being queued (`JobFeed`), against SeaweedFS.
@Suite("Runs fed while they run")
struct JobFeedTests {
    @Test("commit sizes: a first one that fills the slots, then four times bigger, at most 512")
    func chunks() {
        #expect(JobFeed.chunks(count: 2_000, concurrency: 4) == [
            0..<16, 16..<80, 80..<336, 336..<848, 848..<1_360, 1_360..<1_872, 1_872..<2_000,
        ])
        #expect(JobFeed.chunks(count: 5, concurrency: 1) == [0..<5])
        #expect(JobFeed.chunks(count: 9, concurrency: 1) == [0..<8, 8..<9])
        #expect(JobFeed.chunks(count: 0, concurrency: 4) == [])
    }

    /// Files of a few KiB in a scratch folder, as push requests under `prefix`.
    static func requests(_ count: Int, in directory: borrowing TestDirectory, prefix: String) throws
        -> [(request: PushRequest, sha256: String)]
    {
        try (0..<count).map { index in
            let file = try directory.makeFile(String(format: "t%03d.bin", index), size: 3_000 + index, seed: UInt64(index + 1))
            return (PushRequest(path: file.path, key: prefix + String(format: "t%03d.bin", index), attributes: ObjectAttributes()), file.sha256)
        }
    }

    @Test("the first files upload before the rest are queued: every file lands once, with its history row")
    func startsBeforeQueued() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("feed")
        let directory = try TestDirectory()
        let files = try Self.requests(40, in: directory, prefix: scope)
        let store = try Store(path: directory.path + "/r2up.sqlite")
        let queue = UploadQueue(store: store, service: try server.service())
        // The producer queues 5 files, then waits for one of them to be uploaded before it queues
        // the rest: a run that waited for its producer to finish would never end.
        let firstUploaded = AsyncStream<Void>.makeStream()
        let summary = await queue.run(
            [],
            feeding: { feed in
                await Intake(queue: queue).enqueue(files.prefix(5).map(\.request), into: feed) { request, _ in
                    Issue.record("\(request.path) not queued")
                }
                for await _ in firstUploaded.stream { break }
                await Intake(queue: queue).enqueue(files.dropFirst(5).map(\.request), into: feed) { request, _ in
                    Issue.record("\(request.path) not queued")
                }
            },
            attributes: RunAttributes(), admit: { _ in true }
        ) { event in
            if case .completed = event { firstUploaded.continuation.yield() }
        }
        #expect(summary.failed.isEmpty, "\(summary.failed.map(\.diagnosis.message))")
        #expect(summary.completed.count == 40)
        #expect(summary.leftResumable == 0)
        #expect(summary.category == .success)
        let stored = try await IndependentClient.fetch(files.map(\.request.key), bucket: server.bucket, server: server)
        for file in files { #expect(stored[file.request.key]?.sha256 == file.sha256, "\(file.request.key)") }
        #expect(try store.uploadCount() == 40)
        #expect(try store.jobs(in: [.staged, .initiated, .uploading, .verifying]).isEmpty)
    }

    @Test("a store failure while queueing stops the run: what was queued before uploads, the rest stays unqueued, exit 5")
    func storeFailureStops() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("feedfail")
        let directory = try TestDirectory()
        let files = try Self.requests(12, in: directory, prefix: scope)
        let store = try Store(path: directory.path + "/r2up.sqlite")
        let queue = UploadQueue(store: store, service: try server.service())
        let summary = await queue.run(
            [],
            feeding: { feed in
                await Intake(queue: queue).enqueue(files.prefix(4).map(\.request), into: feed) { _, _ in }
                feed.fail(.busy(path: directory.path + "/r2up.sqlite"))
            },
            attributes: RunAttributes(), admit: { _ in true }
        ) { _ in }
        #expect(summary.stoppedBy?.diagnosis.category == .storeFailure)
        #expect(summary.category == .storeFailure)
        #expect(summary.completed.count <= 4)
        // Every job queued is uploaded or left queued for the next run; none shows as uploading.
        #expect(summary.completed.count + summary.leftResumable == 4)
        #expect(try store.jobs(in: [.uploading, .verifying]).allSatisfy { $0.lease == nil })
        #expect(try store.uploadCount() == summary.completed.count)
    }

    @Test("cancelled while it waits for the producer: interrupted, and every queued job is left to resume")
    func cancelledWhileWaiting() async throws {
        let server = try TestServer.require()
        let scope = server.scratchPrefix("feedcancel")
        let directory = try TestDirectory()
        let files = try Self.requests(6, in: directory, prefix: scope)
        let store = try Store(path: directory.path + "/r2up.sqlite")
        let queue = UploadQueue(store: store, service: try server.service())
        let queuedSome = AsyncStream<Void>.makeStream()
        let run = Task {
            await queue.run(
                [],
                feeding: { feed in
                    await Intake(queue: queue).enqueue(files.prefix(2).map(\.request), into: feed) { _, _ in }
                    queuedSome.continuation.yield()
                    // Holds the run waiting for more until it is cancelled.
                    while feed.isOpen { try? await Task.sleep(for: .milliseconds(20)) }
                    await Intake(queue: queue).enqueue(files.dropFirst(2).map(\.request), into: feed) { _, _ in }
                },
                attributes: RunAttributes(), admit: { _ in true }
            ) { _ in }
        }
        for await _ in queuedSome.stream { break }
        // Let the two queued files finish, then cancel the run that waits for more.
        try await Task.sleep(for: .milliseconds(500))
        run.cancel()
        let summary = await run.value
        #expect(summary.interrupted)
        #expect(summary.category == .interrupted)
        #expect(summary.completed.count == 2)
        // The producer saw the run closed and queued nothing more; the four it never queued
        // are what the next run takes.
        #expect(summary.leftResumable == 4)
        #expect(try store.uploadCount() == 2)
        #expect(try store.jobs(in: [.staged, .initiated, .uploading, .verifying]).isEmpty)
    }
}
