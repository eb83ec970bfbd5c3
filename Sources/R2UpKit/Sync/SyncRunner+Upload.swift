import Foundation
import Synchronization
import R2UpModel
import R2UpStore
import R2UpTransfer

/// A pass's uploads and copies: queued through the one intake while the first files upload,
/// then tallied into the pass's summary.
extension SyncRunner {
    func upload(
        _ uploads: [PlannedUpload], moves: [PlannedMove], store: Store, options: SyncOptions, into summary: inout SyncSummary
    ) async throws {
        guard !uploads.isEmpty || !moves.isEmpty else { return }
        // Named while the files are queued: a pass with nothing to send sends nothing.
        service.nameServerAhead(replace: options.replace)
        let intake = Intake(queue: UploadQueue(store: store, service: service, policy: options.retryPolicy))
        // The tracks that moved follow their files first: a move the store refuses is uploaded as usual.
        let movesQueued = try intake.enqueueMoves(
            moves, contentType: options.attributes.contentType, intent: .scheduled, replace: options.replace)
        summary.renamed = movesQueued.renamed
        for conflict in movesQueued.conflicts {
            summary.fail(SyncFailure(path: conflict.path, key: conflict.key, error: conflict.reason))
        }
        // Queued a commit at a time while the first files upload (`JobFeed`); what waits is counted after.
        let queued = SyncQueued(waiting: movesQueued.waiting)
        let attributes = ObjectAttributes(contentType: options.attributes.contentType)
        let requests = (uploads + movesQueued.uploads).map {
            PushRequest(scanned: $0.file, key: $0.key, attributes: attributes, unlessUploaded: $0.reason != .missingRemote)
        }
        let replace = options.replace
        let produce: @Sendable (JobFeed) async -> Void = { feed in
            await intake.enqueue(requests, intent: .scheduled, replace: replace, into: feed) { request, result in
                queued.take(request, result)
            }
        }

        let tally = SyncRunTally(deleteAfter: options.deleteAfter)
        let admitsMore = options.admitsMore
        let observer = options.onEvent
        let onQueued = options.onQueued
        let result = await intake.run(
            movesQueued.jobs, feeding: produce, abortsOrphans: options.abortsOrphans,
            attributes: RunAttributes(options.attributes, tagFeed: options.tagFeed), progress: options.progress,
            admit: { job in (admitsMore?() ?? true) && Self.isAsQueued(job) },
            onEvent: { event in
                defer { observer?(event) }
                if case .queued(let job) = event { onQueued?(job) }
                tally.take(event)
            })
        let done = tally.value
        Self.count(waiting: queued.waiting, into: &summary)
        for (failure, category) in queued.refused { summary.fail(failure, category: category) }
        if options.deleteMoved {
            // A file pushed to another prefix or key template did not move: its old object is a
            // second copy of it that stays (DESIGN §10: only a moved track's old object goes).
            let rekeyed = Set(moves.filter(\.isRekey).map(\.track.key))
            let moved = done.copiedFrom.filter { !rekeyed.contains($0) }
            summary.movedDeleted = await deleteMoved(moved, store: store, into: &summary)
        }
        summary.waiting += try await settleDeferred(result.deferred, store: store)
        summary.take(done, run: result)
    }

    /// Counts the queued files a run leaves alone: in conflict with another track's key, waiting
    /// for `r2up retry` or for their next attempt, or held by another live r2up.
    private static func count(waiting: [(job: UploadJob, disposition: JobDisposition)], into summary: inout SyncSummary) {
        for (job, disposition) in waiting {
            switch disposition {
            case .conflict(let conflict):
                let refusal = Intake.Conflict(path: job.path, conflict)
                summary.fail(SyncFailure(path: refusal.path, key: refusal.key, error: refusal.reason))
            case .waitsForRetry:
                summary.awaitingRetry += 1
            case .waitsUntil(let date):
                summary.retryLater += 1
                summary.nextRetryAt = min(summary.nextRetryAt ?? date, date)
                summary.retryAt[job.path] = min(summary.retryAt[job.path] ?? date, date)
            case .heldBy:
                summary.heldElsewhere += 1
            case .uploaded:
                // Another run (a push of the folder) uploaded it since the scan.
                summary.unchanged += 1
            case .ready:
                break
            }
        }
    }

    /// `--delete-moved`: the old objects of tracks whose copies were verified (the copy job
    /// completes only after a HEAD of its new key), unless a track holds the old key again.
    /// A deletion that fails is a failure of the run; the object stays.
    private func deleteMoved(_ keys: [String], store: Store, into summary: inout SyncSummary) async -> Int {
        var deleted: [String] = []
        for key in keys {
            do {
                guard try store.keyHolder(bucket: service.bucket, key: key) == nil else { continue }
                try await service.client.deleteObject(bucket: service.bucket, key: key)
                deleted.append(key)
            } catch {
                summary.failures.append(SyncFailure(
                    path: key, key: key, error: "the moved track's old object was not deleted (\(OptionName.deleteMoved.option)): \(Diagnosis(error).message)"))
                summary.raise(.uploadFailed)
            }
        }
        do {
            try store.recordDeletions(bucket: service.bucket, keys: deleted)
        } catch {
            summary.failures.append(SyncFailure(path: databasePath, key: deleted.first ?? "", error: Diagnosis(error).message))
            summary.raise(.storeFailure)
        }
        return deleted.count
    }

    /// Jobs turned away at their start: a file that changed waits for the next run (returns how
    /// many); one that is gone has nothing left to upload, and its job is dropped.
    func settleDeferred(_ jobs: [UploadJob], store: Store) async throws -> Int {
        let gone = jobs.filter { access($0.path, F_OK) != 0 && errno == ENOENT }
        if !gone.isEmpty {
            let queue = UploadQueue(store: store, service: service)
            for (key, uploadID) in try store.dropJobs(gone.map(\.id)) {
                await queue.abort(bucket: service.bucket, key: key, uploadID: uploadID)
            }
        }
        return jobs.count - gone.count
    }

    /// Jobs left waiting whose files are gone since (renamed, moved away, deleted) have nothing
    /// left to upload: dropped, as a job found so at its start is, rather than shown failed or
    /// interrupted for good. That is a job waiting for its next try (the soak met it after a cut),
    /// one failed for good (`r2up retry` could only say the file is gone; CI's soak kept one
    /// failed so), one a stopped run left queued, and one a run set aside because its file
    /// changed before it started (the 30-minute soak left one so: the file was renamed before its
    /// next look). Jobs a live other r2up holds are its own. A batch looks at its own paths, a
    /// full pass at every such job under the folder.
    func dropGoneJobs(root: String, only paths: [String]?, store: Store) async throws {
        let folder = root.hasSuffix("/") ? root : root + "/"
        let wanted = paths.map(Set.init)
        let now = Date()
        let waiting = try store.jobs(in: [.failedRetryable, .failedPermanent, .staged, .initiated, .uploading, .verifying]).filter { job in
            if let lease = job.lease, !lease.isMine, lease.isLive(now: now) { return false }
            return wanted.map { $0.contains(job.path) } ?? job.path.hasPrefix(folder)
        }
        guard !waiting.isEmpty else { return }
        _ = try await settleDeferred(waiting, store: store)
    }

    /// Whether the file still has the size and mtime its job was queued with.
    static func isAsQueued(_ job: UploadJob) -> Bool {
        var info = stat()
        guard stat(job.path, &info) == 0 else { return false }
        let mtime = info.mtimeNs
        return Int64(info.st_size) == job.length && mtime == job.mtimeNs
    }
}
