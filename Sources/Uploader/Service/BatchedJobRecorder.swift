import Foundation
import Synchronization

/// Gathers the store writes of small single-PUT jobs and commits them together (the queue
/// flushes every 50 ms and before any other write): 2,000 files of 16 KiB then cost tens of
/// commits, not 4,000. A completion counts — its event is sent — only once committed; a run
/// that dies before that leaves the job queued, and the next run sends the same bytes again:
/// no history row is lost or doubled.
final class BatchedJobRecorder: Sendable {
    typealias Committed = @Sendable (Result<Void, StoreError>) -> Void

    private struct Pending: Sendable {
        var starts: [UUID] = []
        var completions: [(job: UploadJob, item: UploadItem, committed: Committed)] = []
    }

    private let store: Store
    private let pending = Mutex(Pending())
    /// One flush at a time, so completions are committed and reported in the order they came.
    private let flushing = Mutex(())

    init(store: Store) {
        self.store = store
    }

    /// The job has started: marked uploading at the next flush.
    func started(_ id: UUID) {
        pending.withLock { $0.starts.append(id) }
    }

    /// The job's upload is verified: published at the next flush, then `committed` is called.
    func completed(_ job: UploadJob, item: UploadItem, committed: @escaping Committed) {
        pending.withLock { $0.completions.append((job, item, committed)) }
    }

    /// Commits what is pending, in one transaction, and reports each completion.
    func flush() {
        flushing.withLock { _ in
            let batch = pending.withLock { pending in
                defer { pending = Pending() }
                return pending
            }
            guard !batch.starts.isEmpty || !batch.completions.isEmpty else { return }
            let outcomes: [Result<Void, StoreError>]
            do throws(StoreError) {
                outcomes = try store.recordBatch(starts: batch.starts, completions: batch.completions.map { ($0.job, $0.item) })
            } catch {
                outcomes = Array(repeating: .failure(error), count: batch.completions.count)
            }
            for (completion, outcome) in zip(batch.completions, outcomes) { completion.committed(outcome) }
        }
    }
}
