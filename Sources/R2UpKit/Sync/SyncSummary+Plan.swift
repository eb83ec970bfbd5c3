import R2UpModel
import R2UpTransfer

extension SyncSummary {
    /// What a pass's plan says before anything is uploaded: what is unchanged, waits, is left
    /// out or refused, and the folders the scan could not read.
    init(plan: SyncPlan, problems: [ScanProblem], root: String, options: SyncOptions) {
        self.init()
        dryRun = options.dryRun
        unchanged = plan.unchanged
        waiting = plan.waiting.count
        excluded = plan.filtered
        // A folder the scan could not read hid its files: the sync is not all done (the folder
        // named on the command line: bad input), unless an exclude leaves it out whole (lost+found).
        let filter = options.filter
        self.problems = problems.filter { problem in
            guard problem.unreadFolder, problem.path.hasPrefix(root + "/") else { return true }
            return !filter.excludesFolder(ObjectKey.nfc(String(problem.path.dropFirst(root.count + 1))))
        }
        for status in self.problems.compactMap({ $0.category(root: root) }) { raise(status) }
        failures = plan.rejected
        cloudOnly = plan.cloudOnly.count
        retryPaths = plan.waiting.map(\.path)
        waitingNewSizes = plan.waitingNewSizes
    }

    /// `--dry-run`: what would be uploaded and copied.
    mutating func plan(_ uploads: [PlannedUpload], moves: [PlannedMove]) {
        planned = uploads.map {
            SyncPlannedFile(path: $0.file.path, key: $0.key, size: $0.file.size, reason: $0.reason)
        }
        uploaded = uploads.count
        uploadedBytes = uploads.reduce(0) { $0 + $1.file.size }
        planned += moves.map {
            SyncPlannedFile(path: $0.upload.file.path, key: $0.upload.key, size: $0.upload.file.size, reason: .moved, copyOf: $0.track.key)
        }
        copied = moves.count
    }
}
