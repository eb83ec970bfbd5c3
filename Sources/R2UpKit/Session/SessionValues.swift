public import Foundation
public import R2UpModel
import R2UpStore

/// A file a session's push took, as its events name it.
public struct UploadFile: Sendable, Equatable, Identifiable {
    /// The upload job's id: stable across the file's events, and `QueueReport`'s entry id.
    public var id: UUID
    /// The absolute path of the file.
    public var path: String
    /// The object key it goes to.
    public var key: String
    /// Its size in bytes.
    public var size: Int64

    /// A file of a push, as its events name it.
    public init(id: UUID, path: String, key: String, size: Int64) {
        self.id = id
        self.path = path
        self.key = key
        self.size = size
    }
}

/// What went wrong, said for people: what happened and what the user can do, in one line.
public struct R2UpFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file it happened to, when it was one file's (nil: the whole push, or the store).
    public var path: String?
    /// One line: what happened and what to do, e.g. "the bucket 'x' does not exist (NoSuchBucket); check …".
    public var message: String
    /// What kind of failure it is, not an exit code (the CLI maps it to one): `.badInput`,
    /// `.configuration`, `.uploadFailed`, `.locked`, `.storeFailure`, `.interrupted`.
    public var category: FailureCategory
    /// When the queue tries the file again by itself; nil when it will not (retry it yourself).
    public var nextAttemptAt: Date?

    /// A failure of `path` (nil: of the whole push), said by `message`.
    public init(path: String?, message: String, category: FailureCategory, nextAttemptAt: Date? = nil) {
        self.path = path
        self.message = message
        self.category = category
        self.nextAttemptAt = nextAttemptAt
    }

    init(_ error: any Error, path: String? = nil) {
        let diagnosis = Diagnosis(error, subject: path)
        self.init(path: path, message: diagnosis.message, category: diagnosis.category)
    }

    /// The message.
    public var description: String { message }
}

/// One track as an app shows it (seed 000): its states and the one icon they give.
public struct TrackStatus: Sendable, Equatable, Identifiable {
    /// The absolute path of the file.
    public var path: String
    /// Its size in bytes when r2up last saw it.
    public var size: Int64
    /// Where it stands with its cloud copy: none, uploading, uploaded or error.
    public var uploadState: UploadState
    /// Where its cloud copy stands with the local file (a pull).
    public var downloadState: DownloadState
    /// The one icon the states give, by DESIGN §7's priority.
    public var icon: TrackIcon
    /// Where its cloud copy is, when it has one.
    public var key: String?
    /// Why its last upload or download failed.
    public var lastError: String?
    /// Its upload was left unfinished by a run that stopped or died; the next run resumes it.
    public var interrupted: Bool
    /// When its row last changed.
    public var updatedAt: Date

    /// The path: a track is its file.
    public var id: String { path }

    init(_ record: TrackRecord) {
        path = record.path
        size = record.size
        uploadState = record.uploadState
        downloadState = record.downloadState
        icon = TrackIcon.for(
            upload: record.uploadState, download: record.downloadState, isLocal: record.isOnDisk, isInCloud: record.key != nil)
        key = record.key
        lastError = record.lastError
        interrupted = record.interrupted
        updatedAt = record.updatedAt
    }
}

/// Something that happened in a session's push, in the order it happened for each file.
public enum R2UpEvent: Sendable {
    /// The file is queued in the store: it survives a crash and starts in turn.
    case queued(UploadFile)
    /// Its upload began (or resumed).
    case started(UploadFile)
    /// Bytes sent so far; at most a few times a second for each file.
    case progress(UploadFile, bytesSent: Int64)
    /// Its job moved to another state (`UploadJobState`: staged, uploading, completed, failed…).
    case jobStateChanged(UploadFile, UploadJobState)
    /// Its track's upload state changed (what a track row shows).
    case trackStateChanged(path: String, UploadState)
    /// Uploaded and verified; the history row is written.
    case completed(UploadFile, UploadItem)
    /// A file (or the whole push, when `path` is nil) failed; the failure says what to do.
    case failed(R2UpFailure)
    /// The push is over.
    case finished(PushResult)
}

/// The end of a push.
public struct PushResult: Sendable {
    /// The uploads that completed, in the order they did.
    public var completed: [UploadItem] = []
    /// Every file that failed or was refused, and a failure of the whole push.
    public var failures: [R2UpFailure] = []
    /// Files left queued (the push stopped or was cancelled); the next push resumes them.
    public var leftQueued = 0
    /// The most serious outcome (the CLI exits with its code): `.success` when every file completed.
    public var category: FailureCategory = .success

    /// An empty result: nothing completed, nothing failed.
    public init() {}
}
