import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport
import R2UpTransfer

/// One decider (issue 24): every state a job's row holds is a transition its machine answered.
/// A driver that skips a transition, or a store that writes a state of its own, fails here.
@Suite("The job driver stores only what the job machine answers")
struct JobDriverTests {
    /// A stored job, its driver, and the store to read it back from.
    struct Rig {
        let folder: ScratchFolder
        let store: Store
        let writer: StoreWriter
        let job: UploadJob
        let driver: JobDriver

        init() throws {
            folder = try ScratchFolder()
            store = try folder.store()
            let job = Sample.job("/m/01.flac", key: "m/01.flac", length: 20 << 20)
            try store.enqueue(job)
            try store.upsertTrack(path: job.path, size: job.length, mtimeNs: job.mtimeNs)
            self.job = job
            writer = StoreWriter(store: store)
            driver = JobDriver(
                job: job, policy: UploadQueue.defaultPolicy, writer: writer, recorder: BatchedJobRecorder(writer: writer),
                live: LiveProgress(), display: nil)
        }

        /// The row and the track as stored, once every write submitted so far has landed.
        func stored() async throws -> (state: UploadJobState?, uploadID: String?, track: UploadState?) {
            await writer.drain()
            let row = try store.job(id: job.id)
            return (row?.state, row?.uploadID, try store.track(path: job.path)?.uploadState)
        }
    }

    @Test("a multipart upload's steps are stored as the machine's transitions, its track by the one rule")
    func multipartSteps() async throws {
        let rig = try Rig()
        var machine = rig.job.machine(policy: UploadQueue.defaultPolicy)

        #expect(rig.driver.start(multipart: true, batched: false) == machine.start(multipart: true))
        try await rig.driver.multipartStarted(uploadID: "U1", partSize: 8 << 20)
        #expect(machine.initiated(uploadID: "U1") == .entered(.initiated))
        var stored = try await rig.stored()
        #expect(stored.state == .initiated)
        #expect(stored.uploadID == "U1")
        #expect(stored.track == UploadJobState.initiated.trackState(heldByRun: true))

        for number in 1...3 {
            try await rig.driver.partFinished(
                UploadedPart(partNumber: number, etag: "\"p\(number)\"", size: 8 << 20), checksum: .md5("bWQ1bWQ1bWQ1bWQ1bWQ1bQ=="))
            #expect(machine.partFinished() == .entered(.uploading))
            stored = try await rig.stored()
            #expect(stored.state == machine.state, "after part \(number)")
        }
        #expect(try rig.store.parts(jobID: rig.job.id).count == 3)

        try await rig.driver.bodySent(etag: nil)
        #expect(machine.bodySent() == .entered(.verifying))
        stored = try await rig.stored()
        #expect(stored.state == .verifying)
        #expect(stored.track == .uploading)

        let completed = try rig.driver.verified(size: rig.job.length)
        #expect(machine.verified() == .entered(.completed))
        #expect(completed.state == .completed)
        try rig.store.completeJob(completed, historyItem: Sample.item("01.flac", key: "m/01.flac", size: rig.job.length))
        stored = try await rig.stored()
        #expect(stored.state == .completed)
        #expect(stored.track == .uploaded)
        #expect(try rig.store.parts(jobID: rig.job.id).isEmpty)
    }

    @Test("a step out of the machine's order is refused: the upload stops and nothing is recorded")
    func stepOutOfOrder() async throws {
        let rig = try Rig()
        #expect(rig.driver.start(multipart: true, batched: false) == .createMultipartUpload)
        // A part before CreateMultipartUpload answered: the machine refuses it, so does the driver.
        await #expect(throws: JournalError.self) {
            try await rig.driver.partFinished(UploadedPart(partNumber: 1, etag: "\"p1\"", size: 8 << 20), checksum: .md5("x"))
        }
        // Checked before any body was sent: refused too, not taken as completed.
        #expect(throws: JournalError.self) { try rig.driver.verified(size: rig.job.length) }
        #expect(rig.driver.job.state == .staged)
        let stored = try await rig.stored()
        #expect(stored.state == .staged)
        #expect(try rig.store.parts(jobID: rig.job.id).isEmpty)
    }

    @Test("the store publishes only a job its machine completed")
    func storeDoesNotDecide() async throws {
        let rig = try Rig()
        let sent = rig.job.driven(to: .verifying)
        #expect(throws: StoreError.self) {
            try rig.store.completeJob(sent, historyItem: Sample.item("01.flac", key: "m/01.flac"))
        }
        #expect(try rig.store.uploadCount() == 0)
        #expect(try rig.store.job(id: rig.job.id)?.state == .staged)
        // The batch's steps store the state the machine entered, not one of the store's choosing.
        let outcomes = try rig.store.recordBatch(
            starts: [rig.job.driven(to: .uploading)], verifying: [],
            completions: [(sent, Sample.item("01.flac", key: "m/01.flac"))])
        #expect(outcomes.map { (try? $0.get()) != nil } == [false])
        #expect(try rig.store.job(id: rig.job.id)?.state == .uploading)
        #expect(try rig.store.uploadCount() == 0)
    }

    @Test("the track's state follows the job's by one rule")
    func trackRule() {
        for state in UploadJobState.allCases {
            let held = state.trackState(heldByRun: true)
            #expect(held == (state == .completed ? .uploaded : .uploading), "\(state) held")
        }
        #expect(UploadJobState.staged.trackState() == UploadState.none)
        #expect(UploadJobState.initiated.trackState() == UploadState.none)
        #expect(UploadJobState.verifying.trackState() == .uploading)
        #expect(UploadJobState.failedRetryable.trackState() == .error)
        #expect(UploadJobState.failedPermanent.trackState() == .error)
        #expect(UploadJobState.completed.trackState() == .uploaded)
        // A copy leaves the track's object where it is: uploaded until it lands, whatever befell it.
        for state in UploadJobState.allCases {
            #expect(state.trackState(copying: true) == .uploaded, "\(state) copying")
            #expect(state.trackState(heldByRun: true, copying: true) == (state == .completed ? .uploaded : .uploading))
        }
    }
}
