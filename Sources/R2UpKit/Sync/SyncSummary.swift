package import Foundation
package import R2UpModel
import R2UpTransfer

/// A file a dry run would upload.
package struct SyncPlannedFile: Sendable, Equatable, Codable {
    package var path: String
    package var key: String
    package var size: Int64
    package var reason: SyncReason
    /// A move: the key copied from.
    package var copyOf: String? = nil
}

/// What a sync did: one line for cron's mail, or an object with `--json`.
package struct SyncSummary: Sendable, Equatable, Encodable {
    package var dryRun = false
    /// Uploaded and verified (with `--dry-run`: would be uploaded).
    package var uploaded = 0
    package var uploadedBytes: Int64 = 0
    package var failed: Int { failures.count }
    package var unchanged = 0
    /// Too young, or changed between scan and upload: the next run takes them.
    package var waiting = 0
    /// Tracks that moved, their new keys made by a server-side copy (no byte sent).
    package var copied = 0
    /// The keys they were copied from (for `--delete-moved`).
    var copiedFrom: [String] = []
    /// Tracks that moved to a path with the same key (`--key-template`): nothing to copy.
    package var renamed = 0
    /// Old objects of moved tracks deleted (`--delete-moved`).
    package var movedDeleted = 0
    /// Local files removed after a verified upload (`--delete-after`).
    package var deleted = 0
    /// Objects with no local file, recorded as cloud only (`--verify-remote`).
    package var cloudOnly = 0
    /// Left out by `--include` / `--exclude` and the default excludes.
    package var excluded = 0
    package var seconds = 0.0
    package var failures: [SyncFailure] = []
    /// What the scan skipped: symbolic link loops, unreadable folders.
    package var problems: [ScanProblem] = []
    /// With `--dry-run`: the files that would be uploaded.
    package var planned: [SyncPlannedFile] = []
    /// Failed for good before: they wait for `r2up retry` (or a change of the file).
    package var awaitingRetry = 0
    /// Failed retryably before: they wait for their next attempt, the first at `nextRetryAt`.
    package var retryLater = 0
    package var nextRetryAt: Date?
    /// Being uploaded by another live r2up.
    package var heldElsewhere = 0
    /// What stopped the run before its end (credentials, bucket, endpoint, clock, store).
    package var stoppedBy: String?
    /// Ctrl-C or SIGTERM.
    package var interrupted = false
    /// Queued and not done because the run stopped: the next run resumes them.
    package var leftResumable = 0
    /// The run's outcome (DESIGN §3); `exitCode` in the JSON where the encoder carries `ExitCodes`.
    package var category: FailureCategory = .success
    /// Files to look at again (too young, or changed under their upload): a watch does.
    /// Not part of the JSON.
    package var retryPaths: [String] = []
    /// Files whose jobs failed retryably, with when their next try is due: a watch takes them
    /// again then. Not part of the JSON.
    var retryAt: [String: Date] = [:]
    /// The requests the run kept in flight, and why (`DepthController`).
    package var depth: DepthReport?
    /// Objects this store uploaded from files now gone or moved, left in the bucket (`--delete` removes them).
    package var stale = 0
    /// With `--delete`: the objects removed from the bucket (with `--dry-run`: those it would remove).
    package var deletions: [SyncDeletion] = []
    /// With `--delete`: objects of files gone that a waiting file of the same size may be a
    /// rename of; kept this run, the next one copies them as a move or deletes them.
    package var kept: [SyncDeletion] = []
    /// Why `--delete` removed nothing (too many at once, part of the folder unreadable).
    package var deletionRefused: String?
    /// Uploaded tracks the pass found gone, and those of them that moved (for `--delete`). Not part of the JSON.
    var vanished: [VanishedTrack] = []
    var movedTracks: [VanishedTrack] = []
    /// `SyncPlan.waitingNewSizes`. Not part of the JSON.
    var waitingNewSizes = Set<Int64>()

    package init() {}

    /// Why `--delete` kept an object of a file gone (`kept`), for its line.
    package static let keptWhy = "file gone; a file of its size is still being written, decided on the next run"

    /// Raises the run's outcome to `category` when that is more serious: the one fold of a run's categories.
    mutating func raise(_ category: FailureCategory) {
        self.category = max(self.category, category)
    }

    /// A file that did not make it: listed, and the outcome raised.
    mutating func fail(_ failure: SyncFailure, category: FailureCategory = .uploadFailed) {
        failures.append(failure)
        raise(category)
    }

    enum CodingKeys: String, CodingKey {
        case dryRun, uploaded, uploadedBytes, copied, wouldCopy, renamed, movedDeleted, wouldUpload, wouldUploadBytes, failed, unchanged, waiting, deleted, cloudOnly, excluded, seconds
        case failures, problems, planned, exitCode
        case awaitingRetry, retryLater, nextRetryAt, heldElsewhere, stoppedBy, interrupted, leftResumable
        case depth
        case stale, removed, wouldRemove, deletions, kept, deletionRefused
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dryRun, forKey: .dryRun)
        // A dry run uploads nothing: what it would upload has a name of its own.
        try c.encode(dryRun ? 0 : uploaded, forKey: .uploaded)
        try c.encode(dryRun ? 0 : uploadedBytes, forKey: .uploadedBytes)
        try c.encode(dryRun ? uploaded : 0, forKey: .wouldUpload)
        try c.encode(dryRun ? uploadedBytes : 0, forKey: .wouldUploadBytes)
        try c.encode(dryRun ? 0 : copied, forKey: .copied)
        try c.encode(dryRun ? copied : 0, forKey: .wouldCopy)
        try c.encode(renamed, forKey: .renamed)
        try c.encode(movedDeleted, forKey: .movedDeleted)
        try c.encode(failed, forKey: .failed)
        try c.encode(unchanged, forKey: .unchanged)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(deleted, forKey: .deleted)
        try c.encode(cloudOnly, forKey: .cloudOnly)
        try c.encode(excluded, forKey: .excluded)
        try c.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        try c.encode(failures, forKey: .failures)
        try c.encode(problems, forKey: .problems)
        try c.encode(planned, forKey: .planned)
        if let codes = encoder.userInfo[ExitCodes.key] as? ExitCodes { try c.encode(codes.code(category), forKey: .exitCode) }
        try c.encode(awaitingRetry, forKey: .awaitingRetry)
        try c.encode(retryLater, forKey: .retryLater)
        try c.encodeIfPresent(nextRetryAt, forKey: .nextRetryAt)
        try c.encode(heldElsewhere, forKey: .heldElsewhere)
        try c.encodeIfPresent(stoppedBy, forKey: .stoppedBy)
        try c.encode(interrupted, forKey: .interrupted)
        try c.encode(leftResumable, forKey: .leftResumable)
        try c.encodeIfPresent(depth, forKey: .depth)
        try c.encode(stale, forKey: .stale)
        try c.encode(dryRun ? 0 : deletions.count, forKey: .removed)
        try c.encode(dryRun ? deletions.count : 0, forKey: .wouldRemove)
        try c.encode(deletions, forKey: .deletions)
        try c.encode(kept, forKey: .kept)
        try c.encodeIfPresent(deletionRefused, forKey: .deletionRefused)
    }

    /// "2026-11-24 07:30 +01:00": local time with its zone, as `queue` prints the next attempt
    /// (cron mail is read anywhere, so the zone is always written).
    package static func clock(_ date: Date) -> String {
        ZonedTime.text(date)
    }

    /// 4210 → "4,210", the same in every locale (cron logs are read by grep).
    package static func count(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }
}
