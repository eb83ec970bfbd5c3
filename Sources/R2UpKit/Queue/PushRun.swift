import Foundation
import Synchronization
package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// `push FILE…|DIR…` from plan to summary: the one path the CLI's `push` and `R2UpSession.push`
/// both take (plan, moves, tags read ahead, queueing while the first files upload, the run, the
/// tags saved). What it found is returned as values; the caller says it.
package struct PushRun: Sendable {
    /// What a push was asked for, beyond its files.
    package struct Options: Sendable {
        /// `--key` (one file only).
        package var key: String?
        package var prefix: String?
        package var template: KeyTemplate?
        /// `--retry-failed`: a folder's failed tracks only.
        package var onlyFailed = false
        /// `--content-type`, else each file's own.
        package var contentType: String?
        package var attributes = ObjectAttributes()
        /// Whether the tags go onto the objects as metadata (they are read and stored either way).
        package var tagMetadata = true
        package var replace = ReplacePolicy.guarded

        package init() {}
    }

    /// A request the queue did not take: refused, held by another live r2up, or in conflict.
    package typealias NotQueued = (request: PushRequest, result: Result<EnqueueResult, any Error>)

    /// What happened, for the caller to say.
    package struct Outcome: Sendable {
        /// In the order the queue met them.
        package var notQueued: [NotQueued] = []
        package var summary = QueueRunSummary()
    }

    package let queue: UploadQueue
    package let tags: TagResolver

    package init(queue: UploadQueue) {
        self.queue = queue
        tags = TagResolver(store: queue.store)
    }

    /// The files to push, the tracks that moved, what was skipped (`PushPlan`).
    /// - Throws: `PushPlan.Refusal` (nothing is sent) or a store failure.
    package func plan(_ paths: [String], undecodable: [String: [UInt8]] = [:], options: Options) throws -> PushPlan {
        let attributes = options.attributes
        let contentType = options.contentType
        return try PushPlan(
            paths: paths, undecodable: undecodable, key: options.key, prefix: options.prefix, template: options.template,
            onlyFailed: options.onlyFailed, store: queue.store, tags: tags, bucket: queue.service.bucket
        ) { path in
            var own = attributes
            own.contentType = contentType ?? ContentType.forFile(named: (path as NSString).lastPathComponent)
            return own
        }
    }

    /// Queues the copies of the tracks that moved inside a pushed folder (they follow their
    /// files); `refused` says which moves were not made.
    package func moves(_ plan: PushPlan, options: Options) throws(StoreError) -> UploadQueue.MovesForRun {
        try queue.enqueueMoves(plan.moves, contentType: options.contentType, replace: options.replace)
    }

    /// Queues and uploads what `plan` and `moved` hold. `around` runs the upload part (the CLI
    /// makes it interruptible by signals); `onEvent` hears each job's steps.
    /// - Throws: a store failure saving the tags read (after the run).
    package func run(
        _ plan: PushPlan, moved: UploadQueue.MovesForRun, options: Options, progress: TransferProgress? = nil,
        admit: @escaping @Sendable (UploadJob) -> Bool = { _ in true },
        around: (@escaping @Sendable () async -> QueueRunSummary) async -> QueueRunSummary = { await $0() },
        onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async throws(StoreError) -> Outcome {
        var outcome = Outcome()
        var requests = plan.requests
        requests += moved.uploads.map { plan.request(path: $0.file.path, key: $0.key) }
        // Tags are read (or found unchanged in the store) for every audio file, so status and
        // the catalog have them; without tag metadata they only stay off the objects. They are
        // read while the first files upload, and stored after the run.
        let tagged = tags.attributes(options.attributes, forPaths: requests.map(\.path))
        let runAttributes = options.tagMetadata ? tagged : RunAttributes(options.attributes)
        let toRun = moved.jobs
        let toQueue = requests
        let replace = options.replace
        let queue = queue
        // The files are queued while the first ones upload.
        let notQueued = Mutex<[NotQueued]>([])
        outcome.summary = await around {
            await queue.abortAbandonedUploads()
            return await queue.run(
                toRun,
                feeding: { feed in
                    await queue.enqueue(toQueue, intent: .asked, replace: replace, into: feed) { request, result in
                        notQueued.withLock { $0.append((request, result)) }
                    }
                },
                attributes: runAttributes, progress: progress, admit: admit, onEvent: onEvent)
        }
        outcome.notQueued = notQueued.withLock { $0 }
        try await tags.save()
        return outcome
    }
}
