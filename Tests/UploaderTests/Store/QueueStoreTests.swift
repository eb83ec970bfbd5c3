import Foundation
import Testing

@testable import Uploader

@Suite("Queue maintenance: retry, reset, recovery, counts")
struct QueueStoreTests {
    @Test("failed jobs list the latest failure first; retry requeues them and clears the tracks' error")
    func requeue() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        let permanent = Sample.job("/m/1.flac", key: "1.flac")
        let retryable = Sample.job("/m/2.flac", key: "2.flac")
        let staged = Sample.job("/m/3.flac", key: "3.flac")
        for job in [permanent, retryable, staged] { try store.enqueue(job) }
        try store.upsertTrack(path: "/m/1.flac", size: 1, mtimeNs: 1)
        try store.setUploadState(path: "/m/1.flac", state: .error, error: "AccessDenied")
        try store.updateJob(id: permanent.id) { $0.state = .failedPermanent; $0.attempts = 1; $0.lastError = "AccessDenied" }
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

        #expect(try store.requeueAll() == 1)
        let resumed = try #require(try store.job(id: retryable.id))
        #expect(resumed.state == .initiated)
        #expect(resumed.uploadID == "U2")
        #expect(resumed.nextAttemptAt == nil)
        #expect(try store.failedJobs().isEmpty)
        #expect(try store.requeueAll() == 0)
    }

    @Test("a batch commits starts and completions together; a completion that cannot land fails alone")
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

        #expect(try store.recordBatch(starts: [first.id, second.id], completions: []).isEmpty)
        #expect(try store.job(id: first.id)?.state == .uploading)
        #expect(try store.job(id: first.id)?.attempts == 1)
        #expect(try store.track(path: "/m/2.flac")?.uploadState == .uploading)

        let outcomes = try store.recordBatch(
            starts: [],
            completions: [
                (first, Sample.item("1.flac", key: "1.flac", size: 100)),
                (done, Sample.item("3.flac", key: "3.flac", size: 300)),
                (second, Sample.item("2.flac", key: "2.flac", size: 200)),
            ])
        #expect(outcomes.map { (try? $0.get()) != nil } == [true, false, true])
        #expect(try store.job(id: second.id)?.state == .completed)
        #expect(try store.track(path: "/m/1.flac")?.uploadState == .uploaded)
        // One row per completed file: the refused completion wrote nothing.
        #expect(try store.recentUploads(limit: 10).map(\.fileName).sorted() == ["1.flac", "2.flac", "3.flac"])
    }

    @Test("resetting a job (its file changed) drops its parts and upload id and returns the id to abort")
    func reset() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let job = Sample.job()
        try store.enqueue(job)
        try store.updateJob(id: job.id) { $0.state = .uploading; $0.uploadID = "U1"; $0.lastError = "x" }
        try store.recordPart(jobID: job.id, partNumber: 1, size: 8 << 20, etag: "\"p1\"", checksum: nil)
        #expect(try store.resetJob(id: job.id, length: 99, mtimeNs: 42) == "U1")
        let after = try #require(try store.job(id: job.id))
        #expect(after.state == .staged)
        #expect(after.uploadID == nil)
        #expect(after.bytesSent == 0)
        #expect(after.length == 99)
        #expect(after.mtimeNs == 42)
        #expect(after.lastError == nil)
        #expect(try store.parts(jobID: job.id).isEmpty)
        #expect(try store.resetJob(id: job.id) == nil)
        #expect(throws: StoreError.self) { try store.resetJob(id: UUID()) }
    }

    @Test("after a crash, jobs caught uploading or verifying go back where a run resumes them")
    func recover() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let single = Sample.job("/m/1.flac", key: "1.flac")
        let multi = Sample.job("/m/2.flac", key: "2.flac")
        let verifying = Sample.job("/m/3.flac", key: "3.flac")
        for job in [single, multi, verifying] { try store.enqueue(job) }
        try store.updateJob(id: single.id) { $0.state = .uploading }
        try store.updateJob(id: multi.id) { $0.state = .uploading; $0.uploadID = "U" }
        try store.updateJob(id: verifying.id) { $0.state = .verifying }
        #expect(try store.recoverInterruptedJobs() == 3)
        #expect(try store.job(id: single.id)?.state == .staged)
        #expect(try store.job(id: multi.id)?.state == .initiated)
        #expect(try store.job(id: verifying.id)?.state == .staged)
        #expect(try store.recoverInterruptedJobs() == 0)
    }

    @Test("queue counts per state")
    func counts() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let states: [UploadJobState] = [.staged, .staged, .initiated, .uploading, .failedRetryable, .failedPermanent, .completed]
        for (index, state) in states.enumerated() {
            let job = Sample.job("/m/\(index).flac", key: "\(index).flac")
            try store.enqueue(job)
            try store.updateJob(id: job.id) { $0.state = state }
        }
        let counts = try store.queueCounts()
        #expect(counts[.staged] == 2)
        #expect(counts[.verifying] == 0)
        #expect(counts.waiting == 4)
        #expect(counts.active == 1)
        #expect(counts.failed == 2)
        #expect(counts[.completed] == 1)
        #expect(try store.jobs(in: [.uploading, .verifying]).count == 1)
    }
}
