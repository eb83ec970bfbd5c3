public import Foundation

/// One local file r2up knows: a row of `tracks` (seed 000's Track, DESIGN §4).
public struct TrackRecord: Codable, Sendable, Equatable, Identifiable {
    /// Row id, nil until inserted.
    public var id: Int64?
    /// Absolute path of the file.
    public var path: String
    /// Size in bytes when last seen.
    public var size: Int64
    /// Modification time in nanoseconds since 1970 when last seen.
    public var mtimeNs: Int64
    public var uploadState: UploadState
    public var downloadState: DownloadState
    /// Where its cloud copy is (the seed's cloudTrackId): bucket, key and ETag.
    public var bucket: String?
    public var key: String?
    public var etag: String?
    /// Why the last upload or download failed.
    public var lastError: String?
    public var updatedAt: Date
    /// Read, not stored: the store says "uploading" but no live process works on it — its
    /// run died or was stopped, and the next run resumes it.
    public var interrupted = false
    /// Read, not stored: the file on disk is no longer the copy r2up last uploaded or
    /// downloaded (its size or mtime moved), so it shows as not uploaded (`TrackScan`).
    public var changedSinceUpload = false
    /// Read, not stored: the key a copy of its object is queued to (a move, or another prefix)
    /// that no live run is making; the track stays uploaded at `key` until the copy lands.
    public var pendingCopyKey: String?
    /// Read, not stored: whether the file was on disk when `TrackScan` looked (true unless it says).
    public var isOnDisk = true

    /// A track with no state yet.
    public init(
        id: Int64? = nil, path: String, size: Int64, mtimeNs: Int64, uploadState: UploadState = .none,
        downloadState: DownloadState = .none, bucket: String? = nil, key: String? = nil, etag: String? = nil,
        lastError: String? = nil, updatedAt: Date
    ) {
        self.id = id
        self.path = path
        self.size = size
        self.mtimeNs = mtimeNs
        self.uploadState = uploadState
        self.downloadState = downloadState
        self.bucket = bucket
        self.key = key
        self.etag = etag
        self.lastError = lastError
        self.updatedAt = updatedAt
    }

    /// Whether a cloud copy is known.
    public var isInCloud: Bool { key != nil }

    /// Whether the track is uploaded to `bucket` (nil: to any bucket): an upload to another
    /// bucket is not one to this.
    public func isUploaded(to bucket: String?) -> Bool {
        uploadState == .uploaded && (bucket == nil || self.bucket == bucket)
    }

    /// The icon to show; `isLocal` says whether the file is still on disk.
    public func icon(isLocal: Bool = true) -> TrackIcon {
        .for(upload: uploadState, download: downloadState, isLocal: isLocal, isInCloud: isInCloud)
    }
}
