import Foundation
package import R2UpModel
package import R2UpStore
import R2UpTransfer

/// The one way local files become queued jobs, for `push`, `sync` and `watch` alike (DESIGN §10):
/// the tracks that follow their files (a rename, a move, another prefix or key template) become
/// server-side copies, every other file an upload; a key another track holds refuses the file
/// with one message; what is queued carries the condition its key must meet when it is written.
/// What a run does with the jobs is `UploadQueue`'s.
package struct Intake: Sendable {
    package let queue: UploadQueue

    package init(queue: UploadQueue) {
        self.queue = queue
    }

    // MARK: - Tracks that follow their files

    /// Splits the planned uploads into the tracks that follow their files and the uploads left:
    /// an uploaded, unchanged track whose key is now another (another `--prefix` or
    /// `--key-template`) is copied from where it is; a new file that is a vanished track moved
    /// (`MovePlan`: same device and inode, else same size and digest) is copied from its old key.
    /// A file is read only to compare its digest with a vanished track's of the same size.
    package static func follow(
        _ uploads: [PlannedUpload], vanished: [VanishedTrack], store: Store?, bucket: String
    ) throws(StoreError) -> (moves: [PlannedMove], uploads: [PlannedUpload]) {
        var moves: [PlannedMove] = []
        var rest = uploads
        let changed = uploads.filter { $0.reason == .changed }
        if let store, !changed.isEmpty {
            let tracks = try store.uploadedTracks(at: changed.map(\.file.path), bucket: bucket)
            var rekeyed = Set<[UInt8]>()
            for upload in changed {
                guard let track = tracks[upload.file.path], track.size == upload.file.size, track.mtimeNs == upload.file.mtimeNs,
                    track.key != upload.key
                else { continue }
                moves.append(PlannedMove(upload: upload, track: track))
                rekeyed.insert(Array(upload.file.path.utf8))
            }
            if !rekeyed.isEmpty { rest.removeAll { $0.reason == .changed && rekeyed.contains(Array($0.file.path.utf8)) } }
        }
        // Only tracks whose files are really gone (not skipped as hidden or unreadable) can have moved.
        let gone = vanished.filter { track in
            var info = stat()
            return lstat(track.path, &info) != 0 && errno == ENOENT
        }
        let matched = MovePlan.match(rest, vanished: gone) { file, recorded in
            guard let local = try? LocalFile(path: file.path), local.size == file.size, local.modificationTimeNs == file.mtimeNs
            else { return nil }
            return try? ContentDigest.of(local, like: recorded)
        }
        return (moves + matched.moves, matched.uploads)
    }

    /// A file refused at its key: another track's object is there. Nothing is queued, nothing sent.
    package struct Conflict: Sendable, Equatable {
        package var path: String
        package var key: String
        /// What is wrong, without the path: "the key 'K' holds OTHER uploaded …", after
        /// "moved from OLD: " for a track that moved. The one message push, sync and watch give.
        package var reason: String

        init(path: String, movedFrom: String? = nil, _ conflict: KeyConflict) {
            self.path = path
            key = conflict.key
            reason = (movedFrom.map { "moved from \($0): " } ?? "") + conflict.description
        }

        /// The line that names the file (exit 1).
        package var diagnosis: Diagnosis { Diagnosis(category: .uploadFailed, message: "\(path): \(reason)") }
    }

    /// What `enqueueMoves` did with the tracks that follow their files.
    package struct Moves: Sendable {
        /// The copies to run now (their key conditions noted with the queue).
        package var jobs: [UploadJob] = []
        /// Moves refused: the new key holds a third track's object. Nothing moved.
        package var conflicts: [Conflict] = []
        /// Copies that wait: held by another live r2up, failed before and not yet due.
        package var waiting: [(job: UploadJob, disposition: JobDisposition)] = []
        /// Tracks that followed their file to a path with the same key: nothing to copy.
        package var renamed = 0
        /// Moves the store no longer agrees with: uploaded as usual.
        package var uploads: [PlannedUpload] = []
    }

    /// The tracks follow their files in the store (`Store.enqueueMoves`, one transaction), and
    /// their copies are guarded as this run's uploads are.
    /// - Parameter contentType: `--content-type`, else each file's own.
    package func enqueueMoves(
        _ moves: [PlannedMove], contentType: String?, intent: EnqueueIntent, replace: ReplacePolicy
    ) throws(StoreError) -> Moves {
        guard !moves.isEmpty else { return Moves() }
        let queued = try queue.store.enqueueMoves(
            moves, bucket: queue.service.bucket,
            contentType: { contentType ?? ContentType.forFile(named: $0.upload.file.relativePath) }, intent: intent,
            replace: replace)
        for (id, condition) in queued.conditions {
            queue.expect(condition, for: id, keyHeldElsewhere: queued.heldElsewhere.contains(id))
        }
        return Moves(
            jobs: queued.jobs,
            conflicts: queued.conflicts.map { Conflict(path: $0.move.upload.file.path, movedFrom: $0.move.track.path, $0.conflict) },
            waiting: queued.waiting, renamed: queued.renamed, uploads: queued.uploads)
    }

    // MARK: - Files to upload

    /// The conflict of a request the store refused at its key, if that is why it was not queued.
    package static func conflict(of request: PushRequest, _ result: Result<EnqueueResult, any Error>) -> Conflict? {
        guard case .success(let outcome) = result, case .conflict(let conflict) = outcome.disposition else { return nil }
        return Conflict(path: request.path, conflict)
    }

    /// Checks and queues many files with one store commit. Each result is the queued job with
    /// what this run may do with it, or why that file was refused (nothing written for it);
    /// a store failure throws and queues nothing. A scanned file (`PushRequest.seen`) is not
    /// opened here: its job opens it, and fails like any upload when it cannot.
    package func enqueue(
        _ requests: [PushRequest], intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) async throws(StoreError) -> [Result<EnqueueResult, any Error>] {
        var results: [Result<EnqueueResult, any Error>] = []
        var accepted: [(index: Int, job: UploadJob)] = []
        var unlessUploaded: Set<UUID> = []
        var places: [UUID: FilePlace] = [:]
        let created = Date()
        for request in requests {
            do {
                let path = FilePath.absolute(request.path)
                // A scanned file is queued as its scan saw it; a named one is checked now.
                let seen = try request.seen ?? LocalFile(path: path).seen
                let key = try ObjectKey.validatedForWriting(request.key)
                let job = UploadJob(
                    path: path, bucket: queue.service.bucket, key: key,
                    contentType: request.attributes.contentType ?? ContentType.forFile(named: path),
                    length: seen.size, mtimeNs: seen.mtimeNs, createdAt: created)
                accepted.append((results.count, job))
                if request.unlessUploaded { unlessUploaded.insert(job.id) }
                if let place = request.place { places[job.id] = place }
                results.append(.success(EnqueueResult(job: job, isNew: true)))
            } catch {
                results.append(.failure(error))
            }
        }
        guard !accepted.isEmpty else { return results }
        let jobs = accepted.map(\.job)
        let (ifNotUploaded, filePlaces) = (unlessUploaded, places)
        let stored = try await queue.writer.perform { store throws(StoreError) in
            try store.enqueue(jobs, intent: intent, replace: replace, unlessUploaded: ifNotUploaded, places: filePlaces)
        }
        for (entry, outcome) in zip(accepted, stored) {
            results[entry.index] = .success(outcome)
            if outcome.disposition == .ready {
                queue.expect(outcome.condition, for: outcome.job.id, keyHeldElsewhere: outcome.keyHeldElsewhere)
            }
            // A changed file's old multipart upload (recorded and retried later if this fails).
            if let abandoned = outcome.abandonedUploadID {
                await queue.abort(bucket: outcome.job.bucket, key: outcome.job.key, uploadID: abandoned)
            }
        }
        return results
    }

    /// `enqueue(_:intent:replace:)` a commit at a time, into the `feed` of a run that is going
    /// (`UploadQueue.run(_:feeding:…)`): a small first commit so the first uploads start at once,
    /// then bigger ones (`JobFeed.chunks`). Each queued job goes to the run; `notQueued` hears, in
    /// order, every request that was not: refused (bad file or key), in conflict with another
    /// track's key, held by another live r2up, waiting for its retry, or uploaded meanwhile by
    /// another run. A store failure stops the queueing and the run.
    package func enqueue(
        _ requests: [PushRequest], intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded,
        into feed: JobFeed, notQueued: @escaping @Sendable (PushRequest, Result<EnqueueResult, any Error>) -> Void
    ) async {
        await feed.fill(count: requests.count, concurrency: queue.service.options.concurrency ?? 64) {
            (range) throws(StoreError) -> [UploadJob] in
            let chunk = Array(requests[range])
            let results = try await enqueue(chunk, intent: intent, replace: replace)
            var ready: [UploadJob] = []
            for (request, result) in zip(chunk, results) {
                if case .success(let outcome) = result, outcome.disposition == .ready {
                    ready.append(outcome.job)
                } else {
                    notQueued(request, result)
                }
            }
            return ready
        }
    }

    // MARK: - The run

    /// Runs `jobs` and what `produce` queues meanwhile, after the one preamble of every run:
    /// the multipart uploads earlier runs gave up on but could not abort go first (no request
    /// when there is none), then, with `abortsOrphans`, those a killed run left unrecorded on
    /// the server (one listing). What the run uploads goes to the catalog's cache once it is over
    /// (`SentObjects`, one more consumer of its events: the queue knows nothing of the catalog).
    package func run(
        _ jobs: [UploadJob], feeding produce: (@Sendable (JobFeed) async -> Void)? = nil, abortsOrphans: Bool = false,
        attributes: RunAttributes, progress: TransferProgress? = nil, admit: @escaping @Sendable (UploadJob) -> Bool,
        onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async -> QueueRunSummary {
        await queue.abortAbandonedUploads()
        if abortsOrphans { await queue.abortOrphanedUploads() }
        let catalog = SentObjects()
        let summary = await queue.run(
            jobs, feeding: produce, attributes: attributes, progress: progress, admit: admit,
            onEvent: { event in
                catalog.take(event)
                onEvent(event)
            })
        await catalog.save(attributes: attributes, through: queue.writer)
        return summary
    }
}
