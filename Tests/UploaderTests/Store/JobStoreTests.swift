import Foundation
import GRDB
import Testing

@testable import Uploader

@Suite("The durable upload queue")
struct JobStoreTests {
    @Test("a job goes in and comes out the same")
    func roundTrip() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        let result = try store.enqueue(job)
        #expect(result == EnqueueResult(job: job, isNew: true, abandonedUploadID: nil))
        #expect(try store.job(id: job.id) == job)
        #expect(try store.job(id: UUID()) == nil)
        let idText = try store.rawRead { db in try String.fetchOne(db, sql: "SELECT id FROM jobs") }
        #expect(idText == job.id.uuidString)
    }

    @Test("the same file to the same place is queued once; a changed file starts that job over")
    func dedupe() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let first = Sample.job()
        try store.enqueue(first)
        try store.updateJob(id: first.id) { job in
            job.state = .initiated
            job.uploadID = "U1"
            job.attempts = 2
        }
        try store.recordPart(jobID: first.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: "c1")

        let again = try store.enqueue(Sample.job())
        #expect(again.isNew == false)
        #expect(again.job.id == first.id)
        #expect(again.job.uploadID == "U1")
        #expect(try store.parts(jobID: first.id).count == 1)

        let changed = try store.enqueue(Sample.job(length: 21 << 20, mtimeNs: 1_800_000_000_000_000_000))
        #expect(changed.isNew == false)
        #expect(changed.abandonedUploadID == "U1")
        #expect(changed.job.id == first.id)
        #expect(changed.job.state == .staged)
        #expect(changed.job.uploadID == nil)
        #expect(changed.job.length == 21 << 20)
        #expect(changed.job.attempts == 0)
        #expect(try store.parts(jobID: first.id).isEmpty)

        #expect(try store.enqueue(Sample.job(key: "elsewhere.flac")).isNew)
        #expect(try store.rawRead { db in try UploadJob.fetchCount(db) } == 2)
    }

    @Test("a completed job is history: the same file again makes a new job")
    func afterCompletion() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        try store.enqueue(job)
        try store.completeJob(id: job.id, historyItem: Sample.item())
        let next = try store.enqueue(Sample.job())
        #expect(next.isNew)
        #expect(next.job.id != job.id)
    }

    @Test("pending jobs: initiated first, then staged, then retryable failures that are due")
    func pendingOrder() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let now = Sample.date.addingTimeInterval(3600)
        func add(_ name: String, _ minute: Double, _ change: (inout UploadJob) -> Void) throws -> UUID {
            let job = Sample.job("/m/\(name)", key: name, at: Sample.date.addingTimeInterval(minute * 60))
            try store.enqueue(job)
            try store.updateJob(id: job.id, change)
            return job.id
        }
        let stagedLate = try add("staged-late", 5) { _ in }
        let retryDue = try add("retry-due", 0) { $0.state = .failedRetryable; $0.nextAttemptAt = now }
        let stagedEarly = try add("staged-early", 1) { _ in }
        _ = try add("retry-later", 0) { $0.state = .failedRetryable; $0.nextAttemptAt = now.addingTimeInterval(1) }
        let initiated = try add("initiated", 9) { $0.state = .initiated; $0.uploadID = "U" }
        _ = try add("permanent", 0) { $0.state = .failedPermanent }
        _ = try add("uploading", 0) { $0.state = .uploading }
        _ = try add("completed", 0) { $0.state = .completed }
        let retryUndated = try add("retry-undated", 2) { $0.state = .failedRetryable }

        let pending = try store.pendingJobs(now: now).map(\.id)
        #expect(pending == [initiated, stagedEarly, stagedLate, retryDue, retryUndated])
    }

    @Test("the state machine's decision is stored; a new upload id drops the old parts")
    func updateWithMachine() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        let job = Sample.job()
        try store.enqueue(job)
        var machine = job.machine(policy: JobRetryPolicy(random: { 0.5 }))
        #expect(machine.start(multipart: true) == .createMultipartUpload)
        #expect(machine.initiated(uploadID: "U1") == .uploadParts(uploadID: "U1", listParts: false))
        try store.updateJob(id: job.id, applying: machine)
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: "bWQ1")
        clock.advance(5)
        _ = machine.start(multipart: true)
        #expect(machine.failed(.timeout, now: clock.now) == .retry(after: .milliseconds(250)))
        let stored = try store.updateJob(id: job.id, applying: machine, lastError: "timed out")
        #expect(stored.state == .failedRetryable)
        #expect(stored.attempts == 1)
        #expect(stored.nextAttemptAt == clock.now.addingTimeInterval(0.25))
        #expect(stored.lastError == "timed out")
        #expect(stored.updatedAt == clock.now)
        #expect(try store.job(id: job.id) == stored)
        #expect(try store.parts(jobID: job.id).count == 1)

        #expect(machine.fileChanged() == .restage(abortUploadID: "U1"))
        let restaged = try store.updateJob(id: job.id, applying: machine)
        #expect(restaged.uploadID == nil)
        #expect(restaged.bytesSent == 0)
        #expect(try store.parts(jobID: job.id).isEmpty)
    }

    @Test("a part and the job's bytesSent are written together; parts come back in order")
    func parts() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        try store.enqueue(job)
        try store.recordPart(jobID: job.id, partNumber: 2, size: 8 << 20, etag: "\"p2\"", checksum: "c2")
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: "c1")
        try store.recordPart(jobID: job.id, partNumber: 3, size: 4 << 20, etag: "\"p3\"", checksum: nil)
        #expect(try store.parts(jobID: job.id) == [
            PartRecord(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: "c1"),
            PartRecord(jobID: job.id, partNumber: 2, size: 8 << 20, etag: "\"p2\"", checksum: "c2"),
            PartRecord(jobID: job.id, partNumber: 3, size: 4 << 20, etag: "\"p3\"", checksum: nil),
        ])
        #expect(try store.job(id: job.id)?.bytesSent == 20 << 20)
        // recording a part again (a resend) replaces it and does not count it twice
        try store.recordPart(jobID: job.id, partNumber: 3, size: 4 << 20, etag: "\"p3b\"", checksum: nil)
        #expect(try store.parts(jobID: job.id).last?.etag == "\"p3b\"")
        #expect(try store.job(id: job.id)?.bytesSent == 20 << 20)
        try store.setProgress(jobID: job.id, bytesSent: 123)
        #expect(try store.job(id: job.id)?.bytesSent == 123)
        #expect(throws: StoreError.self) { try store.recordPart(jobID: UUID(), partNumber: 1, size: 1, etag: "e", checksum: nil) }
        #expect(throws: StoreError.self) { try store.setProgress(jobID: UUID(), bytesSent: 1) }
    }

    @Test("completing a job is one transaction: job completed, parts gone, one history row, track uploaded")
    func complete() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        try store.enqueue(job)
        try store.updateJob(id: job.id) { $0.state = .verifying; $0.uploadID = "U1" }
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: nil)
        let item = Sample.item("01.flac", key: job.key, size: job.length, etag: "\"abc-3\"")

        let done = try store.completeJob(id: job.id, historyItem: item)
        #expect(done.state == .completed)
        #expect(done.bytesSent == job.length)
        #expect(try store.parts(jobID: job.id).isEmpty)
        #expect(try store.recentUploads(limit: 10) == [item])
        let track = try #require(try store.track(path: job.path))
        #expect(track.uploadState == .uploaded)
        #expect(track.bucket == "tracks")
        #expect(track.key == job.key)
        #expect(track.etag == "\"abc-3\"")
        #expect(track.size == job.length)

        // twice is refused and writes nothing
        #expect(throws: StoreError.conflict("job \(job.id) is already completed")) {
            try store.completeJob(id: job.id, historyItem: Sample.item())
        }
        #expect(try store.uploadCount() == 1)
    }

    @Test("when any part of completing fails, none of it lands")
    func completeIsAtomic() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        try store.enqueue(job)
        try store.updateJob(id: job.id) { $0.state = .verifying; $0.uploadID = "U1" }
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: nil)
        let clash = Sample.item("other.flac")
        try store.recordUpload(clash)

        // the history insert fails (same id), after the job and parts were already changed
        #expect(throws: StoreError.self) {
            try store.completeJob(id: job.id, historyItem: Sample.item("01.flac", id: clash.id))
        }
        #expect(try store.job(id: job.id)?.state == .verifying)
        #expect(try store.parts(jobID: job.id).count == 1)
        #expect(try store.uploadCount() == 1)
        #expect(try store.track(path: job.path) == nil)
        #expect(throws: StoreError.notFound("job \(clash.id)")) {
            try store.completeJob(id: clash.id, historyItem: Sample.item())
        }
    }
}
