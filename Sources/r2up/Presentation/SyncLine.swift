import R2UpKit

// sync's one summary line (what cron mails), drawn from the runner's counts.
extension SyncSummary {
    /// "sync: 12 uploaded (340 MB), 1 failed, 4,210 unchanged, 3 waiting (still being written) in 2.3 s"
    var line: String {
        var parts = [
            dryRun
                ? "\(SyncSummary.count(uploaded)) to upload (\(ByteCount.string(uploadedBytes)))"
                : "\(SyncSummary.count(uploaded)) uploaded (\(ByteCount.string(uploadedBytes)))"
        ]
        if copied > 0 {
            parts.append(
                dryRun ? "\(SyncSummary.count(copied)) to move (copy in the bucket)" : "\(SyncSummary.count(copied)) moved (copied in the bucket, 0 bytes sent)")
        }
        if renamed > 0 { parts.append("\(SyncSummary.count(renamed)) moved (same key)") }
        if movedDeleted > 0 { parts.append("\(SyncSummary.count(movedDeleted)) old objects of moved tracks deleted") }
        if deleted > 0 { parts.append("\(SyncSummary.count(deleted)) deleted locally") }
        parts.append("\(SyncSummary.count(failed)) failed")
        // A folder that could not be read fails the run (exit 1): the line says why.
        let unread = problems.filter(\.unreadFolder).count
        if unread > 0 { parts.append(unread == 1 ? "1 folder unreadable" : "\(SyncSummary.count(unread)) folders unreadable") }
        parts.append("\(SyncSummary.count(unchanged)) unchanged")
        parts.append("\(SyncSummary.count(waiting)) waiting (still being written)")
        if cloudOnly > 0 { parts.append("\(SyncSummary.count(cloudOnly)) cloud only") }
        if awaitingRetry > 0 { parts.append("\(SyncSummary.count(awaitingRetry)) failed before (waiting for r2up retry)") }
        if retryLater > 0 {
            let when = nextRetryAt.map { " from \(SyncSummary.clock($0))" } ?? ""
            parts.append("\(SyncSummary.count(retryLater)) to retry later\(when)")
        }
        if heldElsewhere > 0 { parts.append("\(SyncSummary.count(heldElsewhere)) being uploaded by another r2up") }
        if leftResumable > 0 { parts.append("\(SyncSummary.count(leftResumable)) left to resume") }
        if !deletions.isEmpty {
            parts.append(dryRun ? "\(SyncSummary.count(deletions.count)) to delete from the bucket" : "\(SyncSummary.count(deletions.count)) deleted from the bucket")
        }
        if !kept.isEmpty {
            parts.append("\(SyncSummary.count(kept.count)) \(dryRun ? "to keep" : "kept") in the bucket (gone, but a file of its size is still being written)")
        }
        if stale > 0 && !(dryRun && stale == deletions.count) {
            parts.append("\(SyncSummary.count(stale)) stale in the bucket (files gone or moved; sync --delete removes them)")
        }
        let tenths = (seconds * 10).rounded() / 10
        return "sync\(dryRun ? " --dry-run" : ""): " + parts.joined(separator: ", ") + " in \(tenths) s"
    }
}
