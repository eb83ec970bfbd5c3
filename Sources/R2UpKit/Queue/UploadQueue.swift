import Foundation
import Synchronization
package import R2UpModel
package import R2UpStore
import R2UpTransfer

/// The durable upload queue (seed 003): jobs live in the store, so a run that dies is
/// continued by the next one — a multipart upload resumes from its recorded parts.
///
/// Each job is driven by its `UploadJobMachine`: the queue feeds it what happened and does
/// what it answers; nothing else decides a job's state. Store writes go through a
/// `StoreWriter`, off the transfer thread.
package final class UploadQueue: Sendable {
    package let store: Store
    package let service: UploadService
    package let policy: JobRetryPolicy
    let writer: StoreWriter
    /// What each job's key must hold when it is written, as its enqueue found (`WriteCondition`);
    /// a job queued by an earlier run and not enqueued again in this one carries none.
    /// (A nil value is decided too: `--overwrite` sends no condition.)
    let conditions = Mutex<[UUID: WriteCondition?]>([:])
    /// Jobs whose key holds another track's upload: an object there is never taken for theirs.
    let keysHeldElsewhere = Mutex<Set<UUID>>([])

    /// Each request already retries a few times with backoff (`RequestRetryPolicy`); a job that
    /// still fails gets one more go in the run (a multipart upload resumes from its parts).
    package static let defaultPolicy = JobRetryPolicy(maxInProcessAttempts: 2)

    /// Files up to this size are uploaded by a task on the transfer thread (hashing 1 MiB takes
    /// well under a millisecond); bigger ones by tasks on the shared pool.
    static let transferThreadLimit: Int64 = 1 << 20

    /// Restarts of one job in a run (the machine allows one per NoSuchUpload streak): a bound.
    static let maxRestarts = 3

    package init(store: Store, service: UploadService, policy: JobRetryPolicy = UploadQueue.defaultPolicy) {
        self.store = store
        self.service = service
        self.policy = policy
        writer = StoreWriter(store: store)
    }

    /// Notes what a job's key must hold when this run writes it, as its enqueue found (`Intake`).
    func expect(_ condition: WriteCondition?, for id: UUID, keyHeldElsewhere: Bool = false) {
        conditions.withLock { _ = $0.updateValue(condition, forKey: id) }
        if keyHeldElsewhere { keysHeldElsewhere.withLock { _ = $0.insert(id) } }
    }
}
