import Foundation

/// Why a file is uploaded.
public enum SyncReason: String, Sendable, Codable {
    /// Never uploaded (or its last upload did not finish).
    case new
    /// Size or mtime moved since its last upload, or it now maps to another key.
    case changed
    /// `--verify-remote`: the object is gone or has the wrong size.
    case missingRemote
    /// A track whose file moved: its new key is a copy of its object (`MovePlan`).
    case moved
}

/// One file to upload, and why.
public struct PlannedUpload: Sendable, Equatable {
    public var file: ScannedFile
    public var key: String
    public var reason: SyncReason

    package init(file: ScannedFile, key: String, reason: SyncReason) {
        self.file = file
        self.key = key
        self.reason = reason
    }
}

/// An uploaded track the scan did not find at its path: maybe its file moved (`MovePlan`).
public struct VanishedTrack: Sendable, Equatable {
    public var path: String
    public var size: Int64
    public var mtimeNs: Int64
    public var key: String
    public var etag: String?
    public var device: Int64?
    public var inode: Int64?
    public var digest: String?

    package init(path: String, size: Int64, mtimeNs: Int64, key: String, etag: String? = nil, device: Int64? = nil, inode: Int64? = nil, digest: String? = nil) {
        self.path = path
        self.size = size
        self.mtimeNs = mtimeNs
        self.key = key
        self.etag = etag
        self.device = device
        self.inode = inode
        self.digest = digest
    }
}

/// A file a sync found at a new path that is a track whose file vanished from its old one:
/// the track follows it, and its new key is made by a server-side copy.
public struct PlannedMove: Sendable, Equatable {
    /// The file at its new path, with its new key.
    public var upload: PlannedUpload
    /// The track as the store knows it, at its old path and key.
    public var track: VanishedTrack

    /// The file did not move: it goes to another key (another prefix or key template), and its
    /// old object is a second copy of it, not a moved track's leftover.
    public var isRekey: Bool { track.path == upload.file.path }

    package init(upload: PlannedUpload, track: VanishedTrack) {
        self.upload = upload
        self.track = track
    }
}
