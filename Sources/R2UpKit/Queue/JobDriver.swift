import Foundation
import Synchronization
import R2UpModel
import R2UpStore
import R2UpTransfer

/// One job as a run drives it: its `UploadJobMachine` and its row, changed only by what the
/// machine answers. It is the upload's journal, so each step of the transfer (an upload id,
/// a part, the body sent) is an event for the machine, recorded off the transfer thread.
/// Every answer is used: an action is returned to the queue, which performs it; a transition
/// is the state stored; a refused event stops the upload (`JournalError`), never passes silently.
final class JobDriver: UploadJournal, Sendable {
    fileprivate struct State {
        var machine: UploadJobMachine
        var job: UploadJob
        /// Parts on the server in this run, for an in-run resume.
        var parts: [UploadedPart]?
        /// Steps wait for the queue's next batched commit (a single PUT).
        var batched = false
        /// Between the start and the job's last word in this run (the input of
        /// `UploadJob.trackState(heldByRun:)`, the one rule for the track).
        var heldByRun = false
        /// The ETag a PUT of this run stored: a later try replaces that object, not an empty key.
        var sentETag: String?
        /// A copy of this run went out to the key while it was empty (`UploadJournal.copySent`).
        var copySent = false
    }

    let jobID: UUID
    let writer: StoreWriter
    let recorder: BatchedJobRecorder
    private let live: LiveProgress
    private let display: TransferProgress?
    private let state: Mutex<State>
    /// A part record that could not be written; the upload stops before completing.
    private let partRecordError = Mutex<StoreError?>(nil)
    /// Another track's upload is at the job's key (`UploadJournal.mayAdoptObjectAtKey`).
    private let keyHeldElsewhere: Bool

    init(
        job: UploadJob, policy: JobRetryPolicy, writer: StoreWriter, recorder: BatchedJobRecorder, live: LiveProgress,
        display: TransferProgress?, keyHeldElsewhere: Bool = false
    ) {
        jobID = job.id
        self.keyHeldElsewhere = keyHeldElsewhere
        self.writer = writer
        self.recorder = recorder
        self.live = live
        self.display = display
        state = Mutex(State(machine: job.machine(policy: policy), job: job))
    }

    /// The job as the machine has left it.
    var job: UploadJob { state.withLock { $0.job } }

    var mayAdoptObjectAtKey: Bool { !keyHeldElsewhere }

    /// Noted in the job (saved with it), so a later run knows the copy too: its retry after a cut
    /// reply takes it, or, the file changed meanwhile, its upload replaces it.
    func copySent() {
        state.withLock { s in
            s.copySent = true
            s.job.copySentSize = s.job.length
            s.job.copySentETag = s.job.copySourceETag
        }
    }

    /// Forgotten in the job too: a later run's refused copy then never takes the object that
    /// refused this one for its own.
    func copyRefused() {
        state.withLock { s in
            s.copySent = false
            s.job.copySentSize = nil
            s.job.copySentETag = nil
        }
    }

    /// Kept over the job's tries in this run and, in the job's row, over runs (for the copy the
    /// job still makes: the same source and size).
    var copyWasSent: Bool {
        state.withLock { s in
            s.copySent || (s.job.copySentSize == s.job.length && s.job.copySentETag == s.job.copySourceETag && s.job.isCopy)
        }
    }

    /// Noted in the job as a copy is (the same two columns: the size and ETag of a write of this
    /// job that may be at the key), so a later run whose file changed replaces the PUT's object:
    /// the soak met it as a 412 "already holds an object", its own PUT stored during a cut.
    func putSent(size: Int64, etag: String?) {
        state.withLock { s in
            s.job.copySentSize = size
            s.job.copySentETag = etag
        }
    }

    /// The object has the size of the copy or PUT this job sent and, where that write's ETag was
    /// a plain MD5 (which every server's copy keeps), that ETag: it is this job's to replace.
    func isOwnEarlierWrite(_ info: ObjectInfo) -> Bool {
        state.withLock { s in
            guard !keyHeldElsewhere, let size = s.job.copySentSize, info.size == size else { return false }
            guard let etag = s.job.copySentETag, Self.isHexMD5(etag) else { return true }
            return info.etag.lowercased() == etag.lowercased()
        }
    }

    private static func isHexMD5(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }
    }

    /// The row to store and the state its track shows.
    var snapshot: (job: UploadJob, track: UploadState) {
        state.withLock { ($0.job, $0.track) }
    }

    /// The machine's start: the step it answers (`.putObject`, `.createMultipartUpload`, or
    /// `.uploadParts`, whose `listParts` says recorded parts are to be read and reconciled);
    /// nil when it refuses (the job is not one a run can take).
    func start(multipart: Bool, batched: Bool) -> UploadJobAction? {
        state.withLock { s in
            let action = s.machine.start(multipart: multipart)
            switch action {
            case .putObject, .createMultipartUpload, .uploadParts: break
            default: return nil
            }
            s.job.apply(s.machine)
            s.job.lastError = nil
            s.batched = batched
            s.heldByRun = true
            if batched { recorder.started(s.job) }
            return action
        }
    }

    /// The ETag this run's PUT stored, if one did.
    var sentETag: String? { state.withLock { $0.sentETag } }

    /// Whether any part of the multipart upload is known (sent in this run or recorded earlier).
    var hasRecordedParts: Bool { state.withLock { !($0.parts ?? []).isEmpty } }

    /// The parts this run has sent, to resume from in the same run.
    var checkpoint: MultipartCheckpoint? {
        state.withLock { s in
            guard let parts = s.parts, let uploadID = s.job.uploadID, let partSize = s.job.partSize else { return nil }
            return MultipartCheckpoint(uploadID: uploadID, partSize: partSize, parts: parts)
        }
    }

    /// The checkpoint an earlier run recorded.
    func checkpoint(from records: [PartRecord]) -> MultipartCheckpoint? {
        let parts = records.map {
            UploadedPart(
                partNumber: $0.partNumber, etag: $0.etag, size: $0.size,
                checksum: $0.checksum.flatMap(PayloadChecksum.init(recorded:)))
        }
        return state.withLock { s in
            s.parts = parts
            guard let uploadID = s.job.uploadID, let partSize = s.job.partSize else { return nil }
            return MultipartCheckpoint(uploadID: uploadID, partSize: partSize, parts: parts)
        }
    }

    // MARK: - UploadJournal

    func multipartStarted(uploadID: String, partSize: Int64) async throws(JournalError) {
        let snapshot: (UploadJob, UploadState) = try state.withLock { s throws(JournalError) in
            // A resume that found nothing to build on starts a new upload.
            if s.machine.state == .uploading, s.machine.uploadID != nil { try s.enter(s.machine.resumeFailed(), jobID) }
            try s.enter(s.machine.initiated(uploadID: uploadID), jobID)
            s.job.partSize = partSize
            s.parts = []
            return (s.job, s.track)
        }
        // Durable before any part goes: a run that dies now leaves an upload the next one resumes.
        do {
            try await writer.perform { store throws(StoreError) in
                try store.saveJob(snapshot.0, trackState: snapshot.1, trackError: nil)
            }
        } catch { throw error.journalError }
    }

    func partFinished(_ part: UploadedPart, checksum: PayloadChecksum) async throws(JournalError) {
        let jobState = try state.withLock { s throws(JournalError) in
            let entered = try s.enter(s.machine.partFinished(), jobID)
            s.parts = (s.parts ?? []) + [part]
            return entered
        }
        // Not awaited: the next part goes at once, even while another process holds the
        // database; a part not yet recorded when a run dies is only sent again.
        let id = jobID
        writer.submit { [self] store in
            do throws(StoreError) {
                try store.recordPart(
                    jobID: id, partNumber: part.partNumber, size: part.size, etag: part.etag, checksum: checksum.recorded,
                    state: jobState)
            } catch {
                partRecordError.withLock { if $0 == nil { $0 = error } }
            }
        }
    }

    func bodySent(etag: String?) async throws(JournalError) {
        let (job, track, batched) = try state.withLock { s throws(JournalError) in
            if let etag, !etag.isEmpty { s.sentETag = etag }
            try s.enter(s.machine.bodySent(), jobID)
            return (s.job, s.track, s.batched)
        }
        if batched {
            recorder.verifying(job)
            return
        }
        await writer.drain()
        if let error = partRecordError.withLock({ $0 }) { throw error.journalError }
        do {
            try await writer.perform { store throws(StoreError) in try store.saveJob(job, trackState: track, trackError: nil) }
        } catch { throw error.journalError }
    }

    func progress(bytesSent: Int64) {
        live.set(jobID, bytes: bytesSent)
        display?.sent(jobID, bytes: bytesSent)
    }

    // MARK: - The run's events

    /// The object is on the server and checked: the job as the machine completed it, to publish.
    func verified(size: Int64, digest: String? = nil) throws(JournalError) -> UploadJob {
        try state.withLock { s throws(JournalError) in
            if let digest { s.job.digest = digest }
            // A resume may find the object completed by a run that died before recording it.
            if s.machine.state == .uploading { try s.enter(s.machine.bodySent(), jobID) }
            try s.enter(s.machine.verified(), jobID)
            s.job.bytesSent = size
            s.heldByRun = false
            return s.job
        }
    }

    /// A failure, as the machine answers it. While the run is stopping, or when the failure
    /// is the whole run's (credentials, bucket, store…), the job is interrupted, not failed:
    /// the next run takes it. Only a retry the machine grants (a part's spurious signature
    /// error, a busy store) comes before that.
    func failed(_ failure: Failure, now: Date, stopping: Bool) -> UploadJobAction {
        state.withLock { s in
            if stopping || failure.kind == .cancelled { return interrupt(&s) }
            // A server never reached: its requests already retried; another round only delays the stop.
            if failure.scope == .run && failure.kind == .connectionRefused { return interrupt(&s) }
            let before = s.machine
            let action = s.machine.failed(failure.kind, now: now)
            if case .retry = action {
                s.job.apply(s.machine)
                s.job.lastError = failure.diagnosis.message
                return action
            }
            if failure.scope == .run {
                s.machine = before
                return interrupt(&s)
            }
            s.job.apply(s.machine)
            switch action {
            case .giveUp, .failPermanently:
                s.job.lastError = failure.diagnosis.message
                s.heldByRun = false
            case .restage:
                s.job.lastError = nil
            default:
                break
            }
            return action
        }
    }

    /// The file is not what the job was queued with: start over from it.
    func fileChanged() -> UploadJobAction {
        state.withLock { s in
            let action = s.machine.fileChanged()
            s.job.apply(s.machine)
            s.job.lastError = nil
            return action
        }
    }

    /// Staged again for a later run (its file changed under the upload): no longer in this
    /// run's hands, so its track stops showing it uploading.
    func setAside() {
        state.withLock { $0.heldByRun = false }
    }

    /// The run stops while this job waits: it is left to the next run. The machine answers
    /// `.suspend`, or refuses for a job that waits for a retry (`failedRetryable`, due at its
    /// `nextAttemptAt`): either way the job is stored as the machine holds it.
    func interrupt() -> UploadJobAction {
        state.withLock { interrupt(&$0) }
    }

    private func interrupt(_ s: inout State) -> UploadJobAction {
        let action = s.machine.interrupted()
        s.job.apply(s.machine)
        s.heldByRun = false
        return action
    }

    /// A copy whose file changed since it moved: its bytes are no longer the object's, so the
    /// file is uploaded to the new key instead.
    func uploadInsteadOfCopy() {
        state.withLock { s in
            s.job.copySourceKey = nil
            s.job.copySourceETag = nil
            s.job.digest = nil
        }
    }

    /// After a restage: the file as it is now is what will be sent.
    func refreshFile() {
        let path = job.path
        guard let file = try? LocalFile(path: path) else { return }
        state.withLock { s in
            s.job.length = file.size
            s.job.mtimeNs = file.modificationTimeNs
            s.job.bytesSent = 0
            s.parts = nil
        }
    }
}

extension JobDriver.State {
    /// The state the track shows, by the one rule.
    fileprivate var track: UploadState { job.trackState(heldByRun: heldByRun) }

    /// Stores in the row the state a transition entered; a refused event is a step out of the
    /// machine's order: the upload stops on it rather than record what the machine did not answer.
    @discardableResult
    fileprivate mutating func enter(_ transition: UploadJobTransition, _ id: UUID) throws(JournalError) -> UploadJobState {
        switch transition {
        case .entered(let entered):
            job.apply(machine)
            return entered
        case .rejected(let state, let event):
            throw JournalError(
                failureKind: .other("refused transition"),
                description: "job \(id): the job machine refused '\(event.rawValue)' in state '\(state.rawValue)'")
        }
    }
}
