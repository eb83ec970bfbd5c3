import Foundation
import GRDB
import Testing
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("The durable upload queue")
struct JobStoreTests {
    @Test("a job goes in and comes out the same")
    func roundTrip() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        let result = try store.enqueue(job)
        var leased = job
        leased.lease = JobLease(owner: .current, heartbeatAt: Sample.date)
        #expect(result == EnqueueResult(job: leased, isNew: true, abandonedUploadID: nil, condition: .absent))
        #expect(try store.job(id: job.id) == leased)
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
        // the heartbeat's progress only ever raises what the parts say
        try store.heartbeat(progress: [job.id: 123])
        #expect(try store.job(id: job.id)?.bytesSent == 20 << 20)
        try store.heartbeat(progress: [job.id: 21 << 20])
        #expect(try store.job(id: job.id)?.bytesSent == 21 << 20)
        #expect(throws: StoreError.self) { try store.recordPart(jobID: UUID(), partNumber: 1, size: 1, etag: "e", checksum: nil) }
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
        // The enqueue noted the file on its track; the completion did not make it uploaded.
        let track = try #require(try store.track(path: job.path))
        #expect(track.uploadState != .uploaded && track.key == nil && track.etag == nil)
        #expect(throws: StoreError.notFound("job \(clash.id)")) {
            try store.completeJob(id: clash.id, historyItem: Sample.item())
        }
    }

    @Test("a key that holds another track's upload is refused in the enqueue; --overwrite takes it over")
    func keyHeldByAnotherTrack() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let a = Sample.job("/music/Album A/01 - Track 1.m4a", key: "01 - Track 1.m4a")
        let queuedA = try store.enqueue([a])[0]
        #expect(queuedA.condition == .absent)
        _ = try store.completeJob(id: a.id, historyItem: Sample.item("01 - Track 1.m4a", key: a.key, etag: "etag-a"))

        let b = Sample.job("/music/Album B/01 - Track 1.m4a", key: "01 - Track 1.m4a")
        let refused = try store.enqueue([b])[0]
        #expect(refused.disposition == .conflict(KeyConflict(key: b.key, otherPath: a.path, uploadedAt: Sample.date)))
        #expect(try store.job(id: b.id) == nil)
        let trackB = try #require(try store.track(path: b.path))
        #expect(trackB.uploadState == .error)
        // When the other track was uploaded, in the local time of the run that refused, with its zone.
        #expect(trackB.lastError == "\(b.path): the key '01 - Track 1.m4a' holds \(a.path) uploaded \(ZonedTime.text(Sample.date)); not sent (the overwrite option replaces it, the key option or the prefix option picks another key)")

        // The same track again: it may replace only the object it wrote.
        let again = Sample.job(a.path, key: a.key, length: 1)
        #expect(try store.enqueue([again])[0].condition == .etag("etag-a"))
        #expect(try store.enqueue([again], replace: .noClobber)[0].condition == .absent)

        let overwrite = try store.enqueue([b], replace: .overwrite)[0]
        #expect(overwrite.disposition == .ready)
        #expect(overwrite.condition == nil)
        _ = try store.completeJob(id: overwrite.job.id, historyItem: Sample.item("01 - Track 1.m4a", key: b.key, etag: "etag-b"))
        let trackA = try #require(try store.track(path: a.path))
        #expect(trackA.key == nil && trackA.bucket == nil && trackA.etag == nil)
        #expect(try store.track(path: b.path)?.key == b.key)
        #expect(try store.uploadCount() == 2)
        // The index the check uses.
        let plan = try store.rawRead { db in
            try Row.fetchAll(db, sql: #"EXPLAIN QUERY PLAN SELECT path, etag FROM tracks WHERE bucket = ? AND "key" = ? LIMIT 2"#, arguments: ["tracks", "k"])
                .map { $0["detail"] as String? ?? "" }
        }
        #expect(plan.contains { $0.contains("tracks_on_key") }, "\(plan)")
    }
}
