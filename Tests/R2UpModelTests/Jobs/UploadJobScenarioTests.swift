import Foundation
import Testing
@testable import R2UpModel

@Suite("Upload jobs from start to end")
struct UploadJobScenarioTests {
    static let now = UploadJobMachineTests.now
    static let policy = UploadJobMachineTests.policy

    @Test("a single PUT: put, HEAD, publish")
    func singlePut() {
        var job = UploadJobMachine(policy: Self.policy)
        #expect(job.start(multipart: false) == .putObject)
        #expect(job.bodySent() == .entered(.verifying))
        #expect(job.verified() == .entered(.completed))
        #expect(job.state == .completed)
        #expect(job.start(multipart: false) == .rejected(state: .completed, event: .start))
    }

    @Test("multipart: create, parts, complete, HEAD, publish")
    func multipart() {
        var job = UploadJobMachine(policy: Self.policy)
        #expect(job.start(multipart: true) == .createMultipartUpload)
        #expect(job.initiated(uploadID: "U") == .entered(.initiated))
        #expect(job.state == .initiated)
        for _ in 1...3 { #expect(job.partFinished() == .entered(.uploading)) }
        #expect(job.bodySent() == .entered(.verifying))
        #expect(job.uploadID == "U")
        #expect(job.verified() == .entered(.completed))
        #expect(job.state == .completed)
        #expect(job.uploadID == "U")
    }

    @Test("a later run resumes an initiated job with ListParts")
    func resume() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", attempts: 2, policy: Self.policy)
        #expect(job.start(multipart: true) == .uploadParts(uploadID: "U", listParts: true))
        #expect(job.state == .uploading)
        #expect(job.attempts == 2)
    }

    @Test("initiated without an upload id starts as staged")
    func initiatedWithoutID() {
        let job = UploadJobMachine(state: .initiated, uploadID: nil)
        #expect(job.state == .staged)
    }

    @Test("a body that is sent every time but never checks out is not progress: the run gives up")
    func sentButNeverVerified() {
        var job = UploadJobMachine(policy: Self.policy)
        var actions: [UploadJobAction] = []
        for _ in 0..<3 {
            _ = job.start(multipart: false)
            _ = job.bodySent()
            actions.append(job.failed(.connectionReset, now: Self.now))
        }
        #expect(actions.map { if case .retry = $0 { true } else { false } } == [true, true, false])
        #expect(job.state == .failedRetryable)
        #expect(job.attempts == 3)
    }

    @Test("a multipart upload sent again on every try but never confirmed gives up: parts sent again are no progress past the check")
    func partsSentAgainButNeverVerified() {
        var job = UploadJobMachine(policy: Self.policy)
        var actions: [UploadJobAction] = []
        _ = job.start(multipart: true)
        _ = job.initiated(uploadID: "U1")
        for attempt in 1...3 {
            if attempt > 1 {
                // The retry finds the upload completed and gone: it starts a new one (issue 28).
                _ = job.start(multipart: true)
                _ = job.resumeFailed()
                _ = job.initiated(uploadID: "U\(attempt)")
            }
            for _ in 1...3 { #expect(job.partFinished() == .entered(.uploading)) }
            _ = job.bodySent()
            actions.append(job.failed(.connectionReset, now: Self.now))
        }
        #expect(actions.map { if case .retry = $0 { true } else { false } } == [true, true, false])
        #expect(job.state == .failedRetryable)
    }

    @Test("retries back off in this run, then give up until nextAttemptAt")
    func retriesThenGiveUp() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", policy: Self.policy)
        _ = job.start(multipart: true)
        #expect(job.failed(.timeout, now: Self.now) == .retry(after: .milliseconds(500)))
        _ = job.start(multipart: true)
        #expect(job.failed(.connectionReset, now: Self.now) == .retry(after: .seconds(1)))
        _ = job.start(multipart: true)
        // third failure in this run: 60 s × 2² × 0.75 (0.5 + 0.5 / 2) until the next run
        let later = Self.now.addingTimeInterval(180)
        #expect(job.failed(.timeout, now: Self.now) == .giveUp(nextAttemptAt: later))
        #expect(job.state == .failedRetryable)
        #expect(job.nextAttemptAt == later)
        #expect(job.uploadID == "U")
        #expect(job.attempts == 3)
    }

    @Test("progress resets the in-run count but not the job's attempts")
    func progressResets() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", policy: Self.policy)
        _ = job.start(multipart: true)
        _ = job.failed(.timeout, now: Self.now)
        _ = job.start(multipart: true)
        _ = job.partFinished()
        #expect(job.attemptsThisRun == 0)
        #expect(job.failed(.timeout, now: Self.now) == .retry(after: .milliseconds(500)))
        #expect(job.attempts == 2)
    }

    @Test("BadDigest three times in a row becomes permanent and aborts the upload")
    func badDigest() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", policy: Self.policy)
        let digest = FailureKind.httpStatus(400, code: "BadDigest")
        _ = job.start(multipart: true)
        #expect(job.failed(digest, now: Self.now) == .retry(after: .milliseconds(500)))
        _ = job.start(multipart: true)
        #expect(job.failed(digest, now: Self.now) == .retry(after: .seconds(1)))
        _ = job.start(multipart: true)
        #expect(job.failed(digest, now: Self.now) == .failPermanently(abortUploadID: "U"))
        #expect(job.state == .failedPermanent)
        #expect(job.uploadID == nil)
    }

    @Test("SignatureDoesNotMatch on a part is retried once; on a single PUT never")
    func signatureMismatch() {
        let mismatch = FailureKind.httpStatus(403, code: "SignatureDoesNotMatch")
        var parts = UploadJobMachine(state: .initiated, uploadID: "U", policy: Self.policy)
        _ = parts.start(multipart: true)
        #expect(parts.failed(mismatch, now: Self.now) == .retry(after: .milliseconds(500)))
        _ = parts.start(multipart: true)
        #expect(parts.failed(mismatch, now: Self.now) == .failPermanently(abortUploadID: "U"))

        var single = UploadJobMachine(policy: Self.policy)
        _ = single.start(multipart: false)
        #expect(single.failed(mismatch, now: Self.now) == .failPermanently(abortUploadID: nil))
    }

    @Test("NoSuchUpload starts the upload over once, then counts as permanent")
    func noSuchUpload() {
        let gone = FailureKind.httpStatus(404, code: "NoSuchUpload")
        var job = UploadJobMachine(state: .initiated, uploadID: "U1", policy: Self.policy)
        _ = job.start(multipart: true)
        #expect(job.failed(gone, now: Self.now) == .restage(abortUploadID: nil))
        #expect(job.state == .staged)
        #expect(job.start(multipart: true) == .createMultipartUpload)
        #expect(job.initiated(uploadID: "U2") == .entered(.initiated))
        #expect(job.failed(gone, now: Self.now) == .failPermanently(abortUploadID: "U2"))
    }

    @Test("a permanent failure waits for requeue, which forgets the attempts")
    func requeueAfterPermanent() {
        var job = UploadJobMachine(policy: Self.policy)
        _ = job.start(multipart: false)
        _ = job.failed(.fileUnreadable, now: Self.now)
        #expect(job.start(multipart: false) == .rejected(state: .failedPermanent, event: .start))
        #expect(job.requeue() == .requeued)
        #expect(job.state == .staged)
        #expect(job.attempts == 0)
        #expect(job.start(multipart: false) == .putObject)
    }

    @Test("cancelling leaves the job resumable and costs no attempt")
    func cancel() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", attempts: 1, policy: Self.policy)
        _ = job.start(multipart: true)
        #expect(job.failed(.cancelled, now: Self.now) == .suspend)
        #expect(job.state == .initiated)
        #expect(job.attempts == 1)
    }

    @Test("a file that changes mid-upload goes back to staged and the upload is aborted")
    func fileChanged() {
        var job = UploadJobMachine(state: .initiated, uploadID: "U", policy: Self.policy)
        _ = job.start(multipart: true)
        _ = job.partFinished()
        #expect(job.failed(.fileChanged, now: Self.now) == .restage(abortUploadID: "U"))
        #expect(job.state == .staged)
        #expect(job.uploadID == nil)
        #expect(job.attempts == 0)
    }
}
