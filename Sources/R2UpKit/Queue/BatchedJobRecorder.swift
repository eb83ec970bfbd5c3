import Foundation
import Synchronization
import R2UpStore

/// Gathers the store writes of small single-PUT jobs and commits them together (the queue
/// flushes every 50 ms and before such a job's failure): 2,000 files of 16 KiB then cost tens
/// of commits, not 4,000. A completion counts — its event is sent — only once committed; a run
/// that dies before that leaves the job queued, and the next run sends the same bytes again:
/// no history row is lost or doubled. Commits run on the `StoreWriter`'s thread.
final class BatchedJobRecorder: Sendable {
    typealias Committed = @Sendable (Result<Void, StoreError>) -> Void

    private struct Pending: Sendable {
        /// Jobs as their machine started or sent them: the state stored is the one it answered.
        var starts: [UploadJob] = []
        var verifying: [UploadJob] = []
        var completions: [(job: UploadJob, item: UploadItem, committed: Committed)] = []

        var isEmpty: Bool { starts.isEmpty && verifying.isEmpty && completions.isEmpty }
    }

    private let writer: StoreWriter
    private let pending = Mutex(Pending())

    init(writer: StoreWriter) {
        self.writer = writer
    }

    /// The job has started: stored in the state its machine entered at the next flush.
    func started(_ job: UploadJob) {
        pending.withLock { $0.starts.append(job) }
    }

    /// The job's body is on the server: stored as its machine left it (verifying) at the next
    /// flush, unless it completes first.
    func verifying(_ job: UploadJob) {
        pending.withLock { $0.verifying.append(job) }
    }

    /// The job's upload is verified: published at the next flush, then `committed` is called.
    func completed(_ job: UploadJob, item: UploadItem, committed: @escaping Committed) {
        pending.withLock { $0.completions.append((job, item, committed)) }
    }

    /// Commits what is pending, in one transaction, and reports each completion; returns once done.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Taken and handed to the writer under one lock: batches commit in the order they were taken.
            pending.withLock { pending in
                let batch = pending
                pending = Pending()
                guard !batch.isEmpty else {
                    continuation.resume()
                    return
                }
                writer.submit { store in
                    let completing = Set(batch.completions.map(\.job.id))
                    let outcomes: [Result<Void, StoreError>]
                    do throws(StoreError) {
                        outcomes = try store.recordBatch(
                            starts: batch.starts, verifying: batch.verifying.filter { !completing.contains($0.id) },
                            completions: batch.completions.map { ($0.job, $0.item) })
                    } catch {
                        outcomes = Array(repeating: .failure(error), count: batch.completions.count)
                    }
                    for (completion, outcome) in zip(batch.completions, outcomes) { completion.committed(outcome) }
                    continuation.resume()
                }
            }
        }
    }
}
