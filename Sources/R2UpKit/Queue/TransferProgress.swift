package import Foundation
import Synchronization
import R2UpModel
import R2UpStore

/// Live byte counts of a run, for progress bars: the queue writes, a display reads
/// `snapshot()` on its own clock (a redraw never waits on a transfer, nor one on a redraw).
package final class TransferProgress: Sendable {
    /// One file being sent.
    package struct File: Sendable, Equatable {
        package var id: UUID
        package var name: String
        package var size: Int64
        package var sent: Int64

        package init(id: UUID, name: String, size: Int64, sent: Int64) {
            self.id = id
            self.name = name
            self.size = size
            self.sent = sent
        }
    }

    /// The run at one moment.
    package struct Snapshot: Sendable, Equatable {
        /// Files in flight, oldest first.
        package var active: [File] = []
        package var filesTotal = 0
        package var filesDone = 0
        package var filesFailed = 0
        /// Bytes of the files still to send or sent; a failed or skipped file's size leaves it.
        package var bytesTotal: Int64 = 0
        /// Bytes of finished files plus what is sent of the active ones.
        package var bytesDone: Int64 = 0
        /// Bytes that went over the wire in this run: not the parts an earlier run sent, nor a
        /// server-side copy, nor a file found identical. What a rate is computed from.
        package var bytesMoved: Int64 = 0

        package init() {}
    }

    private struct State {
        var active: [UUID: File] = [:]
        var order: [UUID] = []
        var filesTotal = 0
        var filesDone = 0
        var filesFailed = 0
        var bytesTotal: Int64 = 0
        var finishedBytes: Int64 = 0
        var moved: Int64 = 0
    }

    private let state = Mutex(State())
    /// The --bwlimit in force, in bytes a second: no rate shown goes above it.
    package let limit: Int64?

    package init(limit: Int64? = nil) {
        self.limit = limit
    }

    /// Adds files to the run's totals (a queue run calls it with its jobs).
    package func expect(files: Int, bytes: Int64) {
        state.withLock {
            $0.filesTotal += files
            $0.bytesTotal += bytes
        }
    }

    func started(_ job: UploadJob) {
        // A resumed upload starts where its recorded parts end; those bytes are not this run's.
        started(id: job.id, name: FilePath.name(job.path), size: job.length, alreadySent: job.isCopy ? 0 : job.bytesSent)
    }

    /// A transfer (an upload job, a pull's object) began; `alreadySent` bytes of it were sent before.
    func started(id: UUID, name: String, size: Int64, alreadySent: Int64 = 0) {
        let file = File(id: id, name: name, size: size, sent: min(max(0, alreadySent), size))
        state.withLock {
            if $0.active.updateValue(file, forKey: id) == nil { $0.order.append(id) }
        }
    }

    /// `bytes` is the job's total sent so far; a retry may move it back.
    func sent(_ jobID: UUID, bytes: Int64) {
        state.withLock { state in
            guard var file = state.active[jobID] else { return }
            let sent = min(max(0, bytes), file.size)
            // Bytes sent again after a retry moved the count back went over the wire again too.
            state.moved += max(0, sent - file.sent)
            file.sent = sent
            state.active[jobID] = file
        }
    }

    func finished(_ job: UploadJob, succeeded: Bool) {
        finished(id: job.id, size: job.length, succeeded: succeeded)
    }

    func finished(id: UUID, size: Int64, succeeded: Bool) {
        state.withLock { state in
            state.active[id] = nil
            state.order.removeAll { $0 == id }
            if succeeded {
                state.filesDone += 1
                state.finishedBytes += size
            } else {
                state.filesFailed += 1
                state.bytesTotal -= size
            }
        }
    }

    /// A job turned away before it started: it leaves the totals.
    func skipped(_ job: UploadJob) {
        state.withLock {
            $0.filesTotal -= 1
            $0.bytesTotal -= job.length
        }
    }

    package func snapshot() -> Snapshot {
        state.withLock { state in
            var snapshot = Snapshot()
            snapshot.active = state.order.compactMap { state.active[$0] }
            snapshot.filesTotal = state.filesTotal
            snapshot.filesDone = state.filesDone
            snapshot.filesFailed = state.filesFailed
            snapshot.bytesTotal = max(0, state.bytesTotal)
            snapshot.bytesDone = state.finishedBytes + snapshot.active.reduce(0) { $0 + $1.sent }
            snapshot.bytesMoved = state.moved
            return snapshot
        }
    }
}
