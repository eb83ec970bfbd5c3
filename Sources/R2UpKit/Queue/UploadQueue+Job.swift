import Foundation
import Synchronization
import R2UpModel
import R2UpStore
import R2UpTransfer

/// One job's turn in a run: its driver starts it, the transfer layer sends it, the machine's
/// answer to each event says what comes next (`UploadJobAction`), and the queue does that.
extension UploadQueue {
    /// What a job's try came to: go round again from the start (a restart, a retry), or stop.
    enum Turn {
        case again, done
    }

    /// One job from start to end, as its machine says.
    ///
    /// This frame and `attempt`'s stay allocated while the job's request is in flight (a small
    /// file's task is hundreds of them at once), so what happens before and after the request is
    /// in functions of its own, not inlined: their locals do not widen these frames.
    func process(_ driver: JobDriver, in run: RunContext) async {
        // A single PUT has nothing to resume: its steps may wait for the next batched commit.
        // A copy (a moved track) is recorded step by step: it has no batched form.
        var batched = Self.batchable(driver.job, threshold: service.uploader.settings.multipartThreshold)
        var restarts = 0
        while true {
            guard let step = await begin(driver, batched: batched, in: run) else { return }
            let turn: Turn
            do {
                turn = try await attempt(driver, step: step, batched: batched, restarts: &restarts, in: run)
            } catch {
                turn = await failed(driver, error, batched: batched, restarts: &restarts, in: run)
            }
            guard case .again = turn else { return }
            batched = false
        }
    }

    private static func batchable(_ job: UploadJob, threshold: Int64) -> Bool {
        job.uploadID == nil && job.length <= threshold && !job.isCopy
    }

    /// The machine starts the job (nil: it is deferred, or the store refused it).
    @inline(never)
    private func begin(_ driver: JobDriver, batched: Bool, in run: RunContext) async -> UploadJobAction? {
        let job = driver.job
        let threshold = service.uploader.settings.multipartThreshold
        let multipart = !job.isCopy && (job.uploadID != nil || job.length > threshold)
        guard let step = driver.start(multipart: multipart, batched: batched) else {
            run.summary.value.withLock { $0.deferred.append(job) }
            return nil
        }
        if !batched, await !save(driver, control: run.control) { return nil }
        run.onEvent(.started(driver.job))
        return step
    }

    @inline(never)
    private func failed(
        _ driver: JobDriver, _ error: any Error, batched: Bool, restarts: inout Int, in run: RunContext
    ) async -> Turn {
        if batched {
            // The job's start lands before its failure.
            await driver.recorder.flush()
        }
        return await recover(driver, from: error, restarts: &restarts, in: run)
    }

    /// One try: check the file, send it (or copy it), publish it.
    private func attempt(
        _ driver: JobDriver, step: UploadJobAction, batched: Bool, restarts: inout Int, in run: RunContext
    ) async throws -> Turn {
        guard let (publicURL, file) = try Self.opened(driver.job, service: service) else {
            return await changedBeforeSending(driver, restarts: &restarts, in: run)
        }
        let outcome = try await send(driver, file: file, step: step, in: run)
        try await publish(driver, outcome: outcome, publicURL: publicURL, batched: batched, in: run)
        return .done
    }

    /// The job's public URL (before any byte is sent) and its file, opened; nil when the file
    /// changed since it was queued.
    @inline(never)
    private static func opened(_ job: UploadJob, service: UploadService) throws -> (URL, LocalFile)? {
        let publicURL = try service.publicObjectURL(for: job.key, in: job.bucket)
        let file = try LocalFile(path: job.path)
        guard file.size == job.length, file.modificationTimeNs == job.mtimeNs else { return nil }
        return (publicURL, file)
    }

    /// Changed since it was queued, before this run sent anything: whatever an earlier run sent
    /// belongs to the old content. Start over with the file as it is now.
    @inline(never)
    private func changedBeforeSending(_ driver: JobDriver, restarts: inout Int, in run: RunContext) async -> Turn {
        restarts += 1
        await startOver(driver)
        guard restarts <= Self.maxRestarts, await save(driver, control: run.control) else { return .done }
        return .again
    }

    /// Sends the file, or copies a moved track's object (its bytes are in the bucket already).
    @inline(never)
    private func send(_ driver: JobDriver, file: LocalFile, step: UploadJobAction, in run: RunContext) async throws -> UploadOutcome {
        let job = driver.job
        var objectAttributes = await run.attributes.attributes(for: job.path)
        objectAttributes.contentType = job.contentType
        if let sourceKey = job.copySourceKey { return try await copy(driver, from: sourceKey, attributes: objectAttributes) }
        let checkpoint = try await checkpoint(driver, step: step)
        return try await resumableUploader.upload(
            file, bucket: job.bucket, key: job.key, attributes: objectAttributes, checkpoint: checkpoint,
            journal: driver, condition: writeCondition(for: driver))
    }

    /// A moved track: a server-side copy, none of the bytes sent again.
    @inline(never)
    private func copy(_ driver: JobDriver, from sourceKey: String, attributes: ObjectAttributes) async throws -> UploadOutcome {
        let job = driver.job
        return try await resumableUploader.copy(
            from: CopySource(bucket: job.bucket, key: sourceKey), sourceETag: job.copySourceETag,
            size: job.length, to: job.key, bucket: job.bucket, attributes: attributes, journal: driver,
            condition: writeCondition(for: driver))
    }

    /// Where an upload resumes: the machine resumes one an earlier run began, whose recorded parts are read.
    @inline(never)
    private func checkpoint(_ driver: JobDriver, step: UploadJobAction) async throws -> MultipartCheckpoint? {
        if let checkpoint = driver.checkpoint { return checkpoint }
        guard case .uploadParts(_, listParts: true) = step else { return nil }
        let id = driver.job.id
        let parts = try await writer.perform { store throws(StoreError) in try store.parts(jobID: id) }
        return driver.checkpoint(from: parts)
    }

    /// The object is on the server and checked: the machine completes the job, and the store
    /// records it as completed with its history row (in the next batched commit, for a small file).
    @inline(never)
    private func publish(
        _ driver: JobDriver, outcome: UploadOutcome, publicURL: URL, batched: Bool, in run: RunContext
    ) async throws {
        let job = driver.job
        let item = UploadItem(
            fileName: FilePath.name(job.path), fileSize: outcome.size, r2Key: outcome.key, uploadDate: Date(),
            publicURL: publicURL, bucket: job.bucket, etag: outcome.etag, copiedFrom: job.copySourceKey)
        let completed = try driver.verified(size: outcome.size, digest: outcome.digest)
        let summary = run.summary
        if batched {
            driver.recorder.completed(completed, item: item) { committed in
                switch committed {
                case .success:
                    summary.value.withLock {
                        $0.completed.append(item)
                        $0.bytesSent += outcome.bytesSent
                    }
                    run.onEvent(.completed(completed, item, outcome))
                case .failure(let error):
                    // Sent and verified, but not recorded: the run stops; the job stays queued
                    // and the next run sends it again (no history row lost or doubled).
                    run.control.stop(Failure(error, subject: nil))
                }
            }
            return
        }
        let done = try await writer.perform { store throws(StoreError) in try store.completeJob(completed, historyItem: item) }
        summary.value.withLock {
            $0.completed.append(item)
            $0.bytesSent += outcome.bytesSent
        }
        run.onEvent(.completed(done, item, outcome))
    }

    /// A try failed: a copy whose source is gone sends the file instead, a file that is gone
    /// drops its job, and anything else is the machine's to answer.
    private func recover(_ driver: JobDriver, from error: any Error, restarts: inout Int, in run: RunContext) async -> Turn {
        let job = driver.job
        if job.isCopy, case .s3(.service(let missing))? = error as? UploadError,
            missing.code == "NoSuchKey" || (missing.status == 404 && missing.code != "NoSuchBucket")
        {
            // The moved track's old object is gone (deleted behind r2up's back): send the file.
            restarts += 1
            await startOver(driver)
            guard restarts <= Self.maxRestarts, await save(driver, control: run.control) else { return .done }
            return .again
        }
        if let upload = error as? UploadError, upload.fileIsGone {
            // Nothing is left to send, ever: the job goes (with a track never uploaded), as
            // sync settles a file deleted before its turn; the run says which file and why.
            let diagnosis = await service.diagnose(error, subject: job.path).ofFileFound
            let id = job.id
            do {
                let abandoned = try await writer.perform { store throws(StoreError) in try store.dropJobs([id]) }
                for (key, uploadID) in abandoned { await abort(bucket: job.bucket, key: key, uploadID: uploadID) }
            } catch {
                run.control.stop(Failure(error, subject: nil))
                return .done
            }
            report(driver.job, diagnosis, next: nil, in: run)
            return .done
        }
        let failure = Failure(error, diagnosis: await service.diagnose(error, subject: job.path))
        let action = driver.failed(failure, now: Date(), stopping: run.control.isStopped || Task.isCancelled)
        return await perform(action, after: failure, driver, restarts: &restarts, in: run)
    }

    /// Does what the machine answered to a failure.
    private func perform(
        _ action: UploadJobAction, after failure: Failure, _ driver: JobDriver, restarts: inout Int, in run: RunContext
    ) async -> Turn {
        let job = driver.job
        let control = run.control
        switch action {
        case .retry(let delay):
            guard await save(driver, control: control, error: failure.diagnosis.message) else { return .done }
            try? await Task.sleep(for: delay)
            guard Task.isCancelled || control.isStopped else { return .again }
            // The machine refuses to interrupt a job that waits for its retry: it stays
            // failedRetryable, due at its next attempt; either way it is saved as it holds it.
            switch driver.interrupt() {
            case .suspend, .rejected: _ = await save(driver, control: control)
            default: break
            }
            return .done
        case .restage(let abandoned):
            if let abandoned { await abort(bucket: job.bucket, key: job.key, uploadID: abandoned) }
            driver.refreshFile()
            guard failure.kind != .fileChanged else {
                // Not published torn; staged again, for a run that finds the file quiet.
                driver.setAside()
                guard await save(driver, control: control) else { return .done }
                report(driver.job, failure.diagnosis, next: nil, in: run)
                return .done
            }
            // The upload was gone (NoSuchUpload): start it over, once, in this run.
            restarts += 1
            guard restarts <= Self.maxRestarts, await save(driver, control: control) else { return .done }
            return .again
        case .suspend:
            // Interrupted, or the whole run is stopping: resumable, not failed.
            if failure.scope == .run {
                control.stop(failure)
                // A multipart upload with no part recorded has nothing to resume: it goes
                // (the next run's ListParts finds it gone and starts a new one).
                if let uploadID = driver.job.uploadID, !driver.hasRecordedParts {
                    await abort(bucket: job.bucket, key: job.key, uploadID: uploadID)
                }
            }
            _ = await save(driver, control: control)
            return .done
        case .giveUp(let next):
            guard await save(driver, control: control, error: failure.diagnosis.message) else { return .done }
            report(driver.job, failure.diagnosis, next: next, in: run)
            return .done
        case .failPermanently(let abandoned):
            if let abandoned { await abort(bucket: job.bucket, key: job.key, uploadID: abandoned) }
            guard await save(driver, control: control, error: failure.diagnosis.message) else { return .done }
            report(driver.job, failure.diagnosis, next: nil, in: run)
            return .done
        case .rejected, .createMultipartUpload, .putObject, .uploadParts, .requeued:
            // The machine refused the event: keep what the store has and report the failure.
            report(driver.job, failure.diagnosis, next: nil, in: run)
            return .done
        }
    }

    /// The file, or a copy's source, is not what the job was queued with: the machine stages it
    /// again and names the multipart upload to abort; the file as it is now is what goes.
    private func startOver(_ driver: JobDriver) async {
        let job = driver.job
        if case .restage(let abandoned?) = driver.fileChanged() {
            await abort(bucket: job.bucket, key: job.key, uploadID: abandoned)
        }
        driver.uploadInsteadOfCopy()
        driver.refreshFile()
    }

    /// What the key must hold when this job writes it: as its enqueue found, unless a PUT of this
    /// run already stored the file there (a retry after the check failed): then that object.
    private func writeCondition(for driver: JobDriver) -> WriteCondition? {
        guard let found = conditions.withLock({ $0[driver.jobID] ?? nil }) else { return nil }
        return driver.sentETag.map(WriteCondition.etag) ?? found
    }

    private func report(_ job: UploadJob, _ diagnosis: Diagnosis, next: Date?, in run: RunContext) {
        run.summary.value.withLock { $0.failed.append((job, diagnosis)) }
        run.onEvent(.failed(job, diagnosis, nextAttemptAt: next))
    }

    /// Writes the job as its machine left it; a store that cannot take it stops the run.
    private func save(_ driver: JobDriver, control: RunControl, error: String? = nil) async -> Bool {
        let (job, track) = driver.snapshot
        do {
            try await writer.perform { store throws(StoreError) in try store.saveJob(job, trackState: track, trackError: error) }
            return true
        } catch {
            control.stop(Failure(error, subject: nil))
            return false
        }
    }

    /// Uploads that keep their multipart upload on a failure: the job's machine decides.
    private var resumableUploader: FileUploader {
        var settings = service.uploader.settings
        settings.keepPartsOnFailure = true
        return FileUploader(
            client: service.client, settings: settings, slots: service.uploader.slots, retry: service.uploader.retry,
            profile: service.uploader.profile)
    }
}
