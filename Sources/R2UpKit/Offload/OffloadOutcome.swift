public import Foundation
public import R2UpModel
import R2UpTransfer

/// How an offload runs (`r2up offload`'s flags, `--offload-after` of sync and watch).
public struct OffloadOptions: Sendable {
    /// Only tracks whose cloud copy and file are at least this old (uploaded and unchanged that long).
    public var olderThan: Duration?
    /// Keep the local copies of the N most recently uploaded tracks of the selection.
    public var keepNewest = 0
    /// Check everything, remove nothing, record nothing.
    public var dryRun = false
    /// HEAD requests in flight at once: nil follows the service's depth (adaptive unless its
    /// `--concurrency` pins it); a number caps it below that.
    public var concurrency: Int?
    /// The time ages are measured from (tests pin it).
    public var now = Date()

    public init() {}
}

/// Why a track's local copy was kept. Policy reasons (`isFailure` false) are what was asked;
/// the others are checks that failed, and make the run exit 1.
public enum OffloadReason: Sendable, Equatable {
    /// Younger than `--older-than`.
    case tooRecent
    /// Among the `--keep-newest` newest.
    case keptNewest
    /// In a folder argument, a track with no verified cloud copy (never uploaded, failed, queued).
    case notUploaded
    /// Its cloud copy is in another bucket than the one configured.
    case otherBucket(String)
    /// Size or mtime moved since the upload.
    case changedSinceUpload
    /// Same size and mtime, other bytes than the upload's content digest.
    case contentChanged
    case notRegularFile
    case unreadable(String)
    /// Its folder may not be written (a file there cannot be removed).
    case folderNotWritable(String)
    /// HEAD: no object at the key.
    case objectMissing(key: String)
    /// HEAD: the object's size or ETag is not what the upload recorded.
    case objectReplaced(key: String, field: String, recorded: String, found: String)
    /// HEAD failed for this object (after retries).
    case server(Diagnosis)
    /// The run stopped (the server is down, the credentials are refused) before its check.
    case notChecked
    case removeFailed(String)

    public var isFailure: Bool {
        switch self {
        case .tooRecent, .keptNewest, .notUploaded: false
        default: true
        }
    }
}

/// One track's fate.
public struct OffloadOutcome: Sendable, Equatable {
    public var path: String
    public var size: Int64
    /// nil: its local copy was removed (or, in a dry run, would be).
    public var kept: OffloadReason?
}

/// A finished offload.
public struct OffloadSummary: Sendable {
    public var dryRun = false
    public var freed: [OffloadOutcome] = []
    public var kept: [OffloadOutcome] = []
    /// Tracks named whose file was already gone (cloud only before the run).
    public var alreadyCloudOnly = 0
    /// What stopped the run before every track was checked.
    public var stoppedBy: Diagnosis?
    /// HEAD requests sent (tests and the benchmark count them).
    public var requests = 0
    /// The HEADs' depth: what it settled on and why (nil when none was sent).
    public var depth: DepthReport?

    public init() {}

    public var freedBytes: Int64 { freed.reduce(0) { $0 + $1.size } }

    /// The run's outcome: success when all is done (policy keeps are what was asked), a failed
    /// upload when a check kept a track, or the stopping failure's category.
    public var category: FailureCategory {
        var outcome: FailureCategory = kept.contains { $0.kept?.isFailure == true } ? .uploadFailed : .success
        if let stoppedBy { outcome = max(outcome, stoppedBy.category) }
        return outcome
    }
}

/// What was named wrong: nothing is checked or removed when any argument is refused.
package enum OffloadInputError: Error, Sendable, Equatable {
    /// Neither a file nor a folder, and no track r2up knows there.
    case noSuchPath(String)
    /// A folder (or a path) under which r2up has no uploaded track: outside the library.
    case outsideLibrary(String)
    /// A file r2up has no cloud copy of.
    case neverUploaded(String)
    /// Not a regular file or a folder (a link, a device).
    case notAFileOrFolder(String)
}
