public import Foundation

/// Why a run takes a job: a person named the file (push, retry) or a schedule found it (sync, watch).
public enum EnqueueIntent: Sendable, Equatable {
    /// A person asked: a failed job is requeued, whatever its retry rules say.
    case asked
    /// cron or a watcher: a permanently failed job waits for `r2up retry` (or a change of the
    /// file), a retryable one for its `nextAttemptAt`.
    case scheduled
}

/// Whether an upload may replace an object at its key.
public enum ReplacePolicy: Sendable, Equatable {
    /// The default: never another track's object (refused before sending, and on the server
    /// with `If-None-Match: *`, or `If-Match` on the object this track wrote).
    case guarded
    /// `--overwrite`: replace whatever is there; no condition is sent.
    case overwrite
    /// `--no-clobber`: never replace an existing object, whoever wrote it.
    case noClobber
}

/// What a run may do with a queued job.
public enum JobDisposition: Sendable, Equatable {
    /// This run holds it: upload it.
    case ready
    /// Another live process is uploading it.
    case heldBy(pid: Int32)
    /// Failed for good; it waits for `r2up retry` or a change of the file.
    case waitsForRetry
    /// Failed, retryable from this time on.
    case waitsUntil(Date)
    /// Refused before sending: the key holds another track's upload (`--overwrite` replaces it).
    case conflict(KeyConflict)
    /// Uploaded as it is, to this key, by another run since this one looked (two pushes of one
    /// folder): nothing to send.
    case uploaded
}

/// Another track's upload at the key a file would go to.
public struct KeyConflict: Sendable, Equatable, Error, CustomStringConvertible {
    public var key: String
    /// The file whose upload the key holds.
    public var otherPath: String
    /// When that upload finished, when the history has it.
    public var uploadedAt: Date?

    public init(key: String, otherPath: String, uploadedAt: Date?) {
        self.key = key
        self.otherPath = otherPath
        self.uploadedAt = uploadedAt
    }

    public var description: String {
        let when = uploadedAt.map { " uploaded \(ZonedTime.text($0))" } ?? ""
        return "the key '\(key)' holds \(otherPath)\(when); not sent (\(OptionName.overwrite.option) replaces it, \(OptionName.key.option) or \(OptionName.prefix.option) picks another key)"
    }
}

/// The precondition a write carries so the server refuses to replace what r2up does not expect.
public enum WriteCondition: Sendable, Equatable {
    /// The key must be empty (`If-None-Match: *`).
    case absent
    /// The key must hold this ETag, the one this track wrote (`If-Match`).
    case etag(String)
}
