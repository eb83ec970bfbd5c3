public import Foundation
public import GRDB
public import R2UpModel

/// Where a track's cloud copy is.
public struct CloudCopy: Sendable, Equatable {
    public var bucket: String
    public var key: String
    public var etag: String?

    public init(bucket: String, key: String, etag: String?) {
        self.bucket = bucket
        self.key = key
        self.etag = etag
    }
}

/// A durable upload: a row of `jobs` (seed 003's UploadJob, DESIGN §4-5).
public struct UploadJob: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    /// The file to send.
    public var path: String
    public var bucket: String
    public var key: String
    public var contentType: String
    /// The file's size and mtime when queued: a change means the file moved under us.
    public var length: Int64
    public var mtimeNs: Int64
    public var state: UploadJobState
    /// The multipart upload id once created.
    public var uploadID: String?
    /// Part size of a multipart upload, fixed once parts exist.
    public var partSize: Int64?
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var lastError: String?
    /// Bytes on the server so far, for progress.
    public var bytesSent: Int64
    public var createdAt: Date
    public var updatedAt: Date
    /// Who works on it, if a run took it (`JobLease`).
    public var lease: JobLease?
    /// A server-side copy, not an upload: the key of the object its moved track had, and that
    /// object's recorded ETag. nil for an upload.
    public var copySourceKey: String?
    public var copySourceETag: String?
    /// A copy of this job went out to its key while the key was empty: the size and ETag of the
    /// object copied. What is found at the key later with that size is that copy (its reply was
    /// lost), kept when the file then changed and the job became an upload. nil: none sent.
    public var copySentSize: Int64?
    public var copySentETag: String?
    /// The content digest of what the job stores (`ContentDigest`), given to its track.
    public var digest: String?

    /// Whether this job copies an object inside the bucket instead of sending the file.
    public var isCopy: Bool { copySourceKey != nil }

    /// The upload state this job gives its track: the one rule (`UploadJobState.trackState`).
    public func trackState(heldByRun: Bool = false) -> UploadState {
        state.trackState(heldByRun: heldByRun, copying: isCopy)
    }

    /// A new staged job.
    public init(
        id: UUID = .randomVersion4(), path: String, bucket: String, key: String, contentType: String, length: Int64,
        mtimeNs: Int64, partSize: Int64? = nil, createdAt: Date
    ) {
        self.id = id
        self.path = path
        self.bucket = bucket
        self.key = key
        self.contentType = contentType
        self.length = length
        self.mtimeNs = mtimeNs
        self.state = .staged
        self.partSize = partSize
        self.attempts = 0
        self.bytesSent = 0
        self.createdAt = createdAt
        self.updatedAt = createdAt
    }

    /// Not finished and no live process holds it: its run died, stopped or was interrupted
    /// before it got to it. The next run (or `r2up retry`) resumes it; `queue` and `status`
    /// both call it interrupted, as nobody is going to upload it until then.
    public func isInterrupted(now: Date = Date()) -> Bool {
        isInterrupted(leaseIsLive: lease?.isLive(now: now) == true)
    }

    /// `isInterrupted` with the lease's liveness already known.
    public func isInterrupted(leaseIsLive: Bool) -> Bool {
        guard !leaseIsLive else { return false }
        return state.isInFlight || state == .initiated || state == .staged
    }

    /// The state machine, resumed from this row.
    public func machine(policy: JobRetryPolicy = JobRetryPolicy()) -> UploadJobMachine {
        UploadJobMachine(
            state: state, uploadID: uploadID, attempts: attempts, nextAttemptAt: nextAttemptAt, policy: policy)
    }

    /// Copies the machine's state, upload id, attempts and next attempt into the row.
    public mutating func apply(_ machine: UploadJobMachine) {
        state = machine.state
        uploadID = machine.uploadID
        attempts = machine.attempts
        nextAttemptAt = machine.nextAttemptAt
    }
}

/// A part that reached the server: a row of `parts`, what makes resume possible.
public struct PartRecord: Codable, Sendable, Equatable {
    public var jobID: UUID
    /// 1 to 10,000.
    public var partNumber: Int
    public var size: Int64
    /// The ETag UploadPart answered, needed by CompleteMultipartUpload.
    public var etag: String
    /// Base64 MD5 of the part as sent (its Content-MD5).
    public var checksum: String?

    public init(jobID: UUID, partNumber: Int, size: Int64, etag: String, checksum: String?) {
        self.jobID = jobID
        self.partNumber = partNumber
        self.size = size
        self.etag = etag
        self.checksum = checksum
    }
}

// Rows are mapped by hand, not through Codable: a push of 2,000 small files writes each
// row several times, and GRDB's Codable path was a fifth of the client's CPU (perf, W3).
// A column added to the schema must be added here too; StoreTests round-trip every field.

extension UploadState: DatabaseValueConvertible {}
extension DownloadState: DatabaseValueConvertible {}
extension UploadJobState: DatabaseValueConvertible {}

extension TrackRecord: FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "tracks"

    public init(row: Row) throws {
        // TrackRecord is the model's: across modules a struct's init delegates.
        self.init(
            id: try row.decode(forColumn: "id"), path: try row.decode(forColumn: "path"),
            size: try row.decode(forColumn: "size"), mtimeNs: try row.decode(forColumn: "mtimeNs"),
            uploadState: try row.decode(forColumn: "uploadState"), downloadState: try row.decode(forColumn: "downloadState"),
            bucket: try row.decode(forColumn: "bucket"), key: try row.decode(forColumn: "key"),
            etag: try row.decode(forColumn: "etag"), lastError: try row.decode(forColumn: "lastError"),
            updatedAt: try row.storeDate(forColumn: "updatedAt"))
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["path"] = path
        container["size"] = size
        container["mtimeNs"] = mtimeNs
        container["uploadState"] = uploadState
        container["downloadState"] = downloadState
        container["bucket"] = bucket
        container["key"] = key
        container["etag"] = etag
        container["lastError"] = lastError
        container["updatedAt"] = StoreDate.text(updatedAt)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension UploadJob: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "jobs"

    public init(row: Row) throws {
        let idText: String = try row.decode(forColumn: "id")
        guard let id = UUID(uuidString: idText) else {
            throw StoreError.corrupt(path: "jobs", reason: "bad job id '\(idText)'")
        }
        self.id = id
        path = try row.decode(forColumn: "path")
        bucket = try row.decode(forColumn: "bucket")
        key = try row.decode(forColumn: "key")
        contentType = try row.decode(forColumn: "contentType")
        length = try row.decode(forColumn: "length")
        mtimeNs = try row.decode(forColumn: "mtimeNs")
        state = try row.decode(forColumn: "state")
        uploadID = try row.decode(forColumn: "uploadID")
        partSize = try row.decode(forColumn: "partSize")
        attempts = try row.decode(forColumn: "attempts")
        nextAttemptAt = try row.optionalStoreDate(forColumn: "nextAttemptAt")
        lastError = try row.decode(forColumn: "lastError")
        bytesSent = try row.decode(forColumn: "bytesSent")
        createdAt = try row.storeDate(forColumn: "createdAt")
        updatedAt = try row.storeDate(forColumn: "updatedAt")
        copySourceKey = try row.decode(forColumn: "copySourceKey")
        copySourceETag = try row.decode(forColumn: "copySourceETag")
        copySentSize = try row.decode(forColumn: "copySentSize")
        copySentETag = try row.decode(forColumn: "copySentETag")
        digest = try row.decode(forColumn: "digest")
        let ownerPID: Int32? = try row.decode(forColumn: "ownerPID")
        if let ownerPID {
            let start: Int64? = try row.decode(forColumn: "ownerStartTime")
            let beat = try row.optionalStoreDate(forColumn: "heartbeatAt")
            lease = JobLease(
                owner: ProcessIdentity(pid: ownerPID, startTime: start ?? 0), heartbeatAt: beat ?? .distantPast)
        }
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id.uuidString  // upper-case text, as rows have always been written
        container["path"] = path
        container["bucket"] = bucket
        container["key"] = key
        container["contentType"] = contentType
        container["length"] = length
        container["mtimeNs"] = mtimeNs
        container["state"] = state
        container["uploadID"] = uploadID
        container["partSize"] = partSize
        container["attempts"] = attempts
        container["nextAttemptAt"] = nextAttemptAt.map(StoreDate.text)
        container["lastError"] = lastError
        container["bytesSent"] = bytesSent
        container["createdAt"] = StoreDate.text(createdAt)
        container["updatedAt"] = StoreDate.text(updatedAt)
        container["ownerPID"] = lease?.owner.pid
        container["ownerStartTime"] = lease?.owner.startTime
        container["heartbeatAt"] = lease.map { StoreDate.text($0.heartbeatAt) }
        container["copySourceKey"] = copySourceKey
        container["copySourceETag"] = copySourceETag
        container["copySentSize"] = copySentSize
        container["copySentETag"] = copySentETag
        container["digest"] = digest
    }
}

extension PartRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "parts"

    public static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
        .uppercaseString
    }
}
