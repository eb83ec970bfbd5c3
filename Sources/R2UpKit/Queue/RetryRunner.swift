import Foundation
package import R2UpStore
import R2UpTransfer

/// `retry`: requeues the failed and interrupted uploads (all, or the jobs named by id) and runs
/// them, after bringing the failed downloads back (`all` only): a failed fetch through the
/// `Fetcher` (the recorded key, size, ETag and digest; the file in place only when complete),
/// a failed pull through the `Puller` (the object now at its key). It prints nothing: what a
/// user should read comes to `onNotice` in order; the uploads' events to `onEvent`.
package struct RetryRunner: Sendable {
    /// Something the user should read, in the order it happened.
    package enum Notice: Sendable {
        /// No upload or download has failed or was interrupted.
        case nothingToRetry
        /// A failed download, pulled (or fetched) again to this path.
        case pulled(path: String)
        /// A failed download that failed again (or a fetch stopped by the server).
        case pullFailed(Diagnosis)
        /// A failed fetch whose path holds a file now: never fetched over.
        case onDisk(path: String)
    }

    /// Why the retry stopped before its uploads (an unknown id, the store): the line and its category.
    package struct Failure: Error, Sendable {
        package var diagnosis: Diagnosis
    }

    /// The run's end: the uploads' summary (nil when there were none) and the outcome
    /// everything adds up to (a job another live r2up holds counts as locked).
    package struct Summary: Sendable {
        package var run: QueueRunSummary?
        package var category: FailureCategory
    }

    package let store: Store
    package let service: UploadService

    package init(store: Store, service: UploadService) {
        self.store = store
        self.service = service
    }

    /// Retries the jobs named by `ids` (id or its first 8 characters), or with nil everything
    /// that failed. `interruptible` runs the uploads (the CLI ends them on SIGINT).
    package func run(
        ids: [String]?,
        interruptible: (@escaping @Sendable () async -> QueueRunSummary) async -> QueueRunSummary = { await $0() },
        admit: @escaping @Sendable (UploadJob) -> Bool = { _ in true },
        onNotice: (Notice) -> Void, onEvent: @escaping @Sendable (QueueEvent) -> Void
    ) async throws(Failure) -> Summary {
        let plan: RetryPlan
        do {
            plan = try RetryPlan(store: store, bucket: service.bucket, ids: ids)
        } catch let error as SelectionError {
            throw Failure(diagnosis: error.diagnosis)
        } catch {
            throw Failure(diagnosis: Diagnosis(error))
        }
        guard !plan.isEmpty else {
            onNotice(.nothingToRetry)
            return Summary(run: nil, category: .success)
        }
        var worst = FailureCategory.success
        for path in plan.onDisk { onNotice(.onDisk(path: path)) }
        if !plan.fetches.isEmpty { worst = await fetch(plan.fetches, onNotice: onNotice) }
        if !plan.downloads.isEmpty {
            let puller = Puller(service: service, store: store)
            for track in plan.downloads {
                switch await puller.retry(track) {
                case .success(let outcome):
                    onNotice(.pulled(path: outcome.path))
                case .failure(let error):
                    // A track's object gone from the bucket is a failed download (exit 1), not bad
                    // input: the user named no key. The line names the track.
                    var diagnosis = error.diagnosis
                    if diagnosis.category == .badInput { diagnosis.category = .uploadFailed }
                    if !diagnosis.message.hasPrefix(track.path) { diagnosis.message = "\(track.path): \(diagnosis.message)" }
                    onNotice(.pullFailed(diagnosis))
                    worst = max(worst, diagnosis.category)
                }
            }
        }
        guard !plan.uploads.isEmpty else { return Summary(run: nil, category: worst) }
        let jobs: [UploadJob]
        do { jobs = try plan.requeue(store: store) } catch { throw Failure(diagnosis: Diagnosis(error)) }
        // A retried audio file carries its tags as the first attempt did.
        let tags = TagResolver(store: store)
        let attributes = tags.attributes(ObjectAttributes(), forPaths: jobs.map(\.path))
        do { try await tags.save() } catch { throw Failure(diagnosis: Diagnosis(error)) }
        let intake = Intake(queue: UploadQueue(store: store, service: service))
        let summary = await interruptible {
            await intake.run(jobs, attributes: attributes, admit: admit, onEvent: onEvent)
        }
        if !summary.heldElsewhere.isEmpty { worst = max(worst, .locked) }
        return Summary(run: summary, category: max(worst, summary.category))
    }

    /// Failed fetches, brought back as `r2up fetch` does, one line each that fails; returns
    /// their outcome (a server down stops them: one line, the rest left cloud only).
    private func fetch(_ tracks: [StoredTrack], onNotice: (Notice) -> Void) async -> FailureCategory {
        let summary = await Fetcher(puller: Puller(service: service, store: store)).run(tracks)
        for outcome in (summary.fetched + summary.failed).sorted(by: { $0.path < $1.path }) {
            guard let error = outcome.error, let failure = outcome.failure else {
                onNotice(.pulled(path: outcome.path))
                continue
            }
            guard !Fetcher.stopsRun(error) else { continue }  // the stop's one line says it
            onNotice(.pullFailed(Diagnosis(category: failure.category, message: "\(outcome.path): \(failure.message)")))
        }
        if var stop = summary.stoppedBy {
            if summary.notTried > 0 { stop.message += "; \(summary.notTried) not tried, still cloud only" }
            onNotice(.pullFailed(stop))
        }
        return summary.category
    }
}
