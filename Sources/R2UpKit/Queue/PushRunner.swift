import Foundation
import Synchronization
package import R2UpStore
import R2UpTransfer

/// `push`: plans the named files and folders (`PushPlan`), queues the tracks that moved inside
/// a pushed folder as copies, uploads the files while the rest is still being queued, reads
/// their tags ahead, and says what could not be queued. It prints nothing: what a user should
/// read comes to `onNotice`, in order, as typed values; the uploads' events to `onEvent`.
package struct PushRunner: Sendable {
    /// What to push, as the command line gave it.
    package struct Request: Sendable {
        package var paths: [String]
        /// Arguments that were not UTF-8, by the repaired spelling Swift gave them.
        package var undecodable: [String: [UInt8]] = [:]
        package var key: String?
        package var prefix: String?
        package var template: KeyTemplate?
        /// Only the tracks whose last upload failed.
        package var onlyFailed = false
        package var contentType: String?
        package var cacheControl: String?
        package var metadata: [String: String] = [:]
        /// Send each audio file's tags as metadata (they are read and stored either way).
        package var tagMetadata = true
        package var replace: ReplacePolicy = .guarded
        /// A folder named without a trailing `/` keeps its name in the keys (`r2up push`); false: its contents.
        package var folderNames = false

        package init(paths: [String]) { self.paths = paths }
    }

    /// Something the user should read, in the order it happened; none stops the push.
    package enum Notice: Sendable {
        /// A folder with nothing to push (a line of its own, not an error).
        case nothingToPush(String)
        /// A named path that cannot be pushed.
        case skipped(PushPlan.Skipped)
        /// A moved track whose copy was refused.
        case moveRefused(Diagnosis)
        /// Files another live r2up is uploading.
        case heldByOtherRun(pid: Int32, paths: [String])
        /// A file whose key holds an object it must not replace.
        case conflict(Intake.Conflict)
        /// A file that could not be queued.
        case notQueued(Diagnosis)
    }

    /// Why the push stopped (a refused plan, the store): the line and its category.
    package struct Failure: Error, Sendable {
        package var diagnosis: Diagnosis
    }

    /// The run's end: the queue's summary and the outcome everything adds up to.
    package struct Summary: Sendable {
        package var run: QueueRunSummary
        package var category: FailureCategory
        /// Folders' files left alone, uploaded and unchanged.
        package var unchanged = 0
        /// Whether a folder was pushed.
        package var hasFolders = false
        /// Files that could not be queued or were skipped (counted as failed in the summary line).
        package var notQueued = 0
    }

    package let store: Store
    package let service: UploadService

    package init(store: Store, service: UploadService) {
        self.store = store
        self.service = service
    }

    /// Pushes `request`. `interruptible` runs the uploads (the CLI ends them on SIGINT; the
    /// tags are still stored after); `admit` may refuse to start more work.
    package func run(
        _ request: Request, progress: TransferProgress?,
        interruptible: (@escaping @Sendable () async -> QueueRunSummary) async -> QueueRunSummary = { await $0() },
        admit: @escaping @Sendable (UploadJob) -> Bool = { _ in true },
        onNotice: (Notice) -> Void, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async throws(Failure) -> Summary {
        // Named while the folders are scanned and the files queued (one HEAD, unless the endpoint names it).
        service.nameServerAhead(replace: request.replace)
        let intake = Intake(queue: UploadQueue(store: store, service: service))
        var worst = FailureCategory.success
        var jobs: [UploadJob] = []
        let tags = TagResolver(store: store)
        let plan = try self.plan(request, tags: tags)
        for line in plan.nothingToPush { onNotice(.nothingToPush(line)) }
        var requests = plan.requests
        for problem in plan.skipped {
            onNotice(.skipped(problem))
            worst = max(worst, problem.category)
        }
        // Tracks that moved inside a pushed folder follow their files: a copy in the bucket each.
        var refusedMoves = 0
        do {
            let moved = try intake.enqueueMoves(plan.moves, contentType: request.contentType, intent: .asked, replace: request.replace)
            refusedMoves = moved.conflicts.count
            for conflict in moved.conflicts {
                onNotice(.moveRefused(conflict.diagnosis))
                worst = max(worst, .uploadFailed)
            }
            var held: [Int32: [String]] = [:]
            for case (let job, .heldBy(let pid)) in moved.waiting { held[pid, default: []].append(job.path) }
            for (pid, paths) in held.sorted(by: { $0.key < $1.key }) {
                onNotice(.heldByOtherRun(pid: pid, paths: paths))
                worst = max(worst, .locked)
            }
            jobs += moved.jobs
            requests += moved.uploads.map { plan.request(for: $0) }
        } catch {
            throw Failure(diagnosis: Diagnosis(error))
        }
        let attributes = ObjectAttributes(cacheControl: request.cacheControl, metadata: request.metadata)
        // Tags are read (or found unchanged in the store) for every audio file, so status and
        // the catalog have them; without tag metadata they only stay off the objects. They are
        // read while the first files upload, and stored after the run.
        let tagged = tags.attributes(attributes, forPaths: requests.map(\.path))
        let runAttributes = request.tagMetadata ? tagged : RunAttributes(attributes)
        let toRun = jobs
        let toQueue = requests
        let replacePolicy = request.replace
        // The files are queued while the first ones upload; what was not queued is said after the run.
        let notQueued = Mutex<[(request: PushRequest, result: Result<EnqueueResult, any Error>)]>([])
        let summary = await interruptible {
            await intake.run(
                toRun,
                feeding: { feed in
                    await intake.enqueue(toQueue, intent: .asked, replace: replacePolicy, into: feed) { request, result in
                        notQueued.withLock { $0.append((request, result)) }
                    }
                },
                attributes: runAttributes, progress: progress, admit: admit, onEvent: onEvent)
        }
        let refused = notQueued.withLock { $0 }
        worst = max(worst, Self.report(refused, onNotice: onNotice))
        do { try await tags.save() } catch { throw Failure(diagnosis: Diagnosis(error)) }
        return Summary(
            run: summary, category: max(worst, summary.category),
            // A file whose upload to its key is on record already (another run, or an earlier
            // one whose track shows another job's state) is unchanged too, not left uncounted.
            unchanged: plan.unchanged.count + refused.filter { Self.wasUploaded($0.result) }.count, hasFolders: plan.hasFolders,
            notQueued: refused.filter { Self.isRefusal($0.result) }.count + plan.skipped.count + refusedMoves)
    }

    /// What `push --dry-run` shows: the plan alone, nothing queued and nothing sent.
    package func preview(_ request: Request) throws(Failure) -> PushPlan {
        try plan(request, tags: TagResolver(store: store))
    }

    /// The files to push, the tracks that moved, what was skipped.
    private func plan(_ request: Request, tags: TagResolver) throws(Failure) -> PushPlan {
        let attributes = ObjectAttributes(cacheControl: request.cacheControl, metadata: request.metadata)
        let contentType = request.contentType
        do {
            return try PushPlan(
                paths: request.paths, undecodable: request.undecodable, key: request.key, prefix: request.prefix,
                template: request.template, onlyFailed: request.onlyFailed, store: store, tags: tags, bucket: service.bucket,
                folderNames: request.folderNames
            ) { path in
                var own = attributes
                own.contentType = contentType ?? ContentType.forFile(named: (path as NSString).lastPathComponent)
                return own
            }
        } catch let refusal as PushPlan.Refusal {
            throw Failure(diagnosis: refusal.diagnosis)
        } catch {
            throw Failure(diagnosis: Diagnosis(error))
        }
    }

    /// Whether a file that was not queued counts as failed: an error or a conflict (not one another run is uploading).
    private static func wasUploaded(_ result: Result<EnqueueResult, any Error>) -> Bool {
        guard case .success(let outcome) = result, case .uploaded = outcome.disposition else { return false }
        return true
    }

    private static func isRefusal(_ result: Result<EnqueueResult, any Error>) -> Bool {
        guard case .success(let outcome) = result else { return true }
        if case .conflict = outcome.disposition { return true }
        return false
    }

    /// What was not queued: files held by another run (grouped by its pid), conflicts, failures.
    private static func report(
        _ refused: [(request: PushRequest, result: Result<EnqueueResult, any Error>)], onNotice: (Notice) -> Void
    ) -> FailureCategory {
        var worst = FailureCategory.success
        var held: [Int32: [String]] = [:]
        for (request, result) in refused {
            if case .success(let outcome) = result, case .heldBy(let pid) = outcome.disposition {
                held[pid, default: []].append(request.path)
            }
        }
        for (pid, paths) in held.sorted(by: { $0.key < $1.key }) {
            worst = max(worst, .locked)
            onNotice(.heldByOtherRun(pid: pid, paths: paths))
        }
        for (request, result) in refused {
            switch result {
            case .success:
                if let conflict = Intake.conflict(of: request, result) {
                    onNotice(.conflict(conflict))
                    worst = max(worst, .uploadFailed)
                }
            case .failure(let error):
                let named = Diagnosis(error, subject: request.path)
                let diagnosis = request.isFolderFile ? named.ofFileFound : named
                onNotice(.notQueued(diagnosis))
                worst = max(worst, diagnosis.category)
            }
        }
        return worst
    }
}
