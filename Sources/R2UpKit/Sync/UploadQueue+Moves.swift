import Foundation
public import R2UpModel
public import R2UpStore

extension UploadQueue {
    /// What `enqueueMoves` leaves to the caller.
    public struct MovesForRun: Sendable {
        /// The copies to run now (their key conditions noted with the queue).
        public var jobs: [UploadJob] = []
        /// Moves not made, each one line naming the file (a conflict: exit 1; held by another r2up: exit 4).
        public var refused: [Diagnosis] = []
        /// Moves the store turned back into uploads.
        public var uploads: [PlannedUpload] = []
    }

    /// `push DIR`'s moved tracks: they follow their files (`Store.enqueueMoves`), and their copies
    /// are guarded as this run's uploads are.
    /// - Parameter contentType: `--content-type`, else each file's own.
    public func enqueueMoves(
        _ moves: [PlannedMove], contentType: String?, intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) throws(StoreError) -> MovesForRun {
        guard !moves.isEmpty else { return MovesForRun() }
        let queued = try store.enqueueMoves(
            moves, bucket: service.bucket, contentType: { contentType ?? ContentType.forFile(named: $0.upload.file.relativePath) },
            intent: intent, replace: replace)
        var result = MovesForRun(jobs: queued.jobs, uploads: queued.uploads)
        for (id, condition) in queued.conditions { expect(condition, for: id, keyHeldElsewhere: queued.heldElsewhere.contains(id)) }
        for (move, conflict) in queued.conflicts {
            result.refused.append(Diagnosis(
                status: .uploadFailed, message: "\(move.upload.file.path): moved from \(move.track.path): \(conflict.description)"))
        }
        for (job, disposition) in queued.waiting {
            if case .heldBy(let pid) = disposition {
                result.refused.append(Diagnosis(
                    status: .locked, message: "\(job.path): another r2up (pid \(pid)) is uploading it; see r2up queue"))
            }
        }
        return result
    }
}
