import Foundation
import Testing
import GRDB
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("Queue maintenance: leases, retry rules, requeue, cancel, batches")
struct QueueStoreTests {
    @Test("failed jobs list the latest failure first; retry requeues them through their machine and clears the tracks' error")
    func requeue() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        let permanent = Sample.job("/m/1.flac", key: "1.flac")
        let retryable = Sample.job("/m/2.flac", key: "2.flac")
        let staged = Sample.job("/m/3.flac", key: "3.flac")
        for job in [permanent, retryable, staged] { try store.enqueue(job) }
        try store.upsertTrack(path: "/m/1.flac", size: 1, mtimeNs: 1)
        try store.updateJob(id: permanent.id) { $0.state = .failedPermanent; $0.attempts = 1; $0.lastError = "AccessDenied" }
        #expect(try store.track(path: "/m/1.flac")?.uploadState == .error)
        clock.advance(1)
        try store.updateJob(id: retryable.id) {
            $0.state = .failedRetryable
            $0.uploadID = "U2"
            $0.attempts = 4
            $0.nextAttemptAt = clock.now.addingTimeInterval(600)
        }
        #expect(try store.failedJobs().map(\.id) == [retryable.id, permanent.id])

        #expect(try store.requeue(ids: [permanent.id, staged.id, UUID()]) == 1)
        let back = try #require(try store.job(id: permanent.id))
        #expect(back.state == .staged)
        #expect(back.attempts == 0)
        #expect(back.lastError == nil)
        #expect(try store.track(path: "/m/1.flac")?.uploadState == UploadState.none)
        #expect(try store.track(path: "/m/1.flac")?.lastError == nil)

        #expect(try store.requeue(ids: [retryable.id]) == 1)
        let resumed = try #require(try store.job(id: retryable.id))
        #expect(resumed.state == .initiated)
        #expect(resumed.uploadID == "U2")
        #expect(resumed.nextAttemptAt == nil)
        #expect(try store.failedJobs().isEmpty)
    }

    @Test("sync honours the retry rules: a permanent failure waits for retry, a retryable one for its time; push asks again")
    func retryRules() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        let permanent = Sample.job("/m/1.flac", key: "1.flac")
        let retryable = Sample.job("/m/2.flac", key: "2.flac")
        for job in [permanent, retryable] { try store.enqueue(job) }
        try store.updateJob(id: permanent.id) { $0.state = .failedPermanent; $0.lastError = "AccessDenied" }
        let due = clock.now.addingTimeInterval(600)
        try store.updateJob(id: retryable.id) { $0.state = .failedRetryable; $0.nextAttemptAt = due }

        #expect(try store.enqueue(Sample.job("/m/1.flac", key: "1.flac"), intent: .scheduled).disposition == .waitsForRetry)
        #expect(try store.enqueue(Sample.job("/m/2.flac", key: "2.flac"), intent: .scheduled).disposition == .waitsUntil(due))
        #expect(try store.job(id: permanent.id)?.state == .failedPermanent)

        clock.advance(601)
        let later = try store.enqueue(Sample.job("/m/2.flac", key: "2.flac"), intent: .scheduled)
        #expect(later.disposition == .ready)
        #expect(later.job.state == .failedRetryable)  // the machine resumes it from there

        // The file changed: that is a new upload, whatever failed before.
        let changed = try store.enqueue(Sample.job("/m/1.flac", key: "1.flac", length: 5), intent: .scheduled)
        #expect(changed.disposition == .ready)
        #expect(changed.job.state == .staged)

        try store.updateJob(id: permanent.id) { $0.state = .failedPermanent }
        let asked = try store.enqueue(Sample.job("/m/1.flac", key: "1.flac", length: 5), intent: .asked)
        #expect(asked.disposition == .ready)
        #expect(asked.job.state == .staged)
        #expect(asked.job.attempts == 0)
    }

    @Test("a live process's job is left to it; a dead one's is taken over, back where it resumes")
    func leases() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let multi = Sample.job("/m/1.flac", key: "1.flac")
        let single = Sample.job("/m/2.flac", key: "2.flac")
        for job in [multi, single] {
            try store.enqueue(job)
            try store.upsertTrack(path: job.path, size: job.length, mtimeNs: job.mtimeNs)
        }
        let dead = try ProcessIdentity.ended()
        try store.updateJob(id: multi.id) {
            $0.state = .uploading
            $0.uploadID = "U"
            $0.lease = JobLease(owner: dead, heartbeatAt: Sample.date)
        }
        try store.updateJob(id: single.id) { $0.state = .verifying; $0.lease = JobLease(owner: dead, heartbeatAt: Sample.date) }
        try store.recordPart(jobID: multi.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: nil)
        try store.rawWrite { db in try db.execute(sql: "UPDATE tracks SET uploadState = 'uploading'") }

        // Read: not uploading, interrupted (no live owner), in status and in the queue report.
        let tracks = try store.tracks(under: "/m")
        #expect(tracks.map(\.uploadState) == [.none, .none])
        #expect(tracks.map(\.interrupted) == [true, true])
        let report = try QueueReport(store: store)
        #expect(report.counts.uploading == 0)
        #expect(report.counts.interrupted == 2)

        // Another process holds the first: this one leaves it alone.
        let other = ProcessIdentity(pid: getppid(), startTime: ProcessIdentity.startTime(of: getppid()) ?? 0)
        try store.updateJob(id: multi.id) { $0.lease = JobLease(owner: other, heartbeatAt: Date()) }
        let claimed = try store.claim([multi.id, single.id])
        #expect(claimed.map(\.disposition) == [.heldBy(pid: other.pid), .ready])
        #expect(try store.job(id: multi.id)?.state == .uploading)
        #expect(try QueueReport(store: store).uploading.map(\.id) == [multi.id])
        #expect(try store.enqueue(Sample.job("/m/1.flac", key: "1.flac")).disposition == .heldBy(pid: other.pid))

        // Its owner gone, the next run takes it over: initiated with its parts, not uploading.
        try store.updateJob(id: multi.id) { $0.lease = JobLease(owner: dead, heartbeatAt: Sample.date) }
        let taken = try store.claim([multi.id])
        #expect(taken.map(\.disposition) == [.ready])
        #expect(taken.first?.job.state == .initiated)
        #expect(taken.first?.job.lease?.isMine == true)
        #expect(try store.parts(jobID: multi.id).count == 1)
        #expect(try store.job(id: single.id)?.state == .staged)

        try store.releaseLeases()
        #expect(try store.job(id: multi.id)?.lease == nil)
    }

    @Test("cancel drops jobs and their parts, records their multipart uploads to abort, and leaves a live one alone")
    func cancel() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let failed = Sample.job("/m/1.flac", key: "1.flac")
        let held = Sample.job("/m/2.flac", key: "2.flac")
        for job in [failed, held] {
            try store.enqueue(job)
            try store.upsertTrack(path: job.path, size: job.length, mtimeNs: job.mtimeNs)
        }
        try store.updateJob(id: failed.id) { $0.state = .failedPermanent; $0.uploadID = "U1"; $0.lastError = "x" }
        try store.recordPart(jobID: failed.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: nil)
        let other = ProcessIdentity(pid: getppid(), startTime: ProcessIdentity.startTime(of: getppid()) ?? 0)
        try store.updateJob(id: held.id) { $0.state = .uploading; $0.lease = JobLease(owner: other, heartbeatAt: Date()) }

        let result = try store.cancelJobs([failed.id, held.id])
        #expect(result.cancelled.map(\.id) == [failed.id])
        #expect(result.held.map(\.pid) == [other.pid])
        #expect(try store.job(id: failed.id) == nil)
        #expect(try store.parts(jobID: failed.id).isEmpty)
        #expect(try store.track(path: "/m/1.flac")?.uploadState == UploadState.none)
        #expect(try store.abandonedUploads().map(\.uploadID) == ["U1"])
        #expect(try store.job(id: held.id)?.state == .uploading)

        try store.recordAbandoned(bucket: "tracks", key: "1.flac", uploadID: "U1", error: "timed out")
        #expect(try store.abandonedUploads().first?.attempts == 1)
        #expect(try store.abandonedUploads().first?.lastError == "timed out")
        try store.forgetAbandoned(bucket: "tracks", key: "1.flac", uploadID: "U1")
        #expect(try store.abandonedUploads().isEmpty)
    }

    @Test("a batch commits starts, verifying and completions together; a completion that cannot land fails alone")
    func batch() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let first = Sample.job("/m/1.flac", key: "1.flac", length: 100)
        let second = Sample.job("/m/2.flac", key: "2.flac", length: 200)
        let done = Sample.job("/m/3.flac", key: "3.flac", length: 300)
        for job in [first, second, done] {
            try store.enqueue(job)
            try store.upsertTrack(path: job.path, size: job.length, mtimeNs: job.mtimeNs)
        }
        try store.completeJob(id: done.id, historyItem: Sample.item("3.flac", key: "3.flac"))

        let started = [first, second].map { $0.driven(to: .uploading) }
        #expect(try store.recordBatch(starts: started, verifying: [second.driven(to: .verifying)], completions: []).isEmpty)
        #expect(try store.job(id: first.id)?.state == .uploading)
        #expect(try store.job(id: second.id)?.state == .verifying)
        #expect(try store.track(path: "/m/2.flac")?.uploadState == .uploading)

        let outcomes = try store.recordBatch(
            starts: [], verifying: [],
            completions: [
                (first.driven(to: .completed), Sample.item("1.flac", key: "1.flac", size: 100)),
                (done.driven(to: .completed), Sample.item("3.flac", key: "3.flac", size: 300)),
                (second.driven(to: .completed), Sample.item("2.flac", key: "2.flac", size: 200)),
            ])
        #expect(outcomes.map { (try? $0.get()) != nil } == [true, false, true])
        #expect(try store.job(id: second.id)?.state == .completed)
        #expect(try store.job(id: second.id)?.lease == nil)
        #expect(try store.track(path: "/m/1.flac")?.uploadState == .uploaded)
        // One row per completed file: the refused completion wrote nothing.
        #expect(try store.recentUploads(limit: 10).map(\.fileName).sorted() == ["1.flac", "2.flac", "3.flac"])
    }
}
