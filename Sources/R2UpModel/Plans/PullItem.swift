public import Foundation

/// One object to pull and the file it becomes, relative to the destination.
public struct PullItem: Sendable, Equatable {
    public var key: String
    public var size: Int64
    public var etag: String
    public var lastModified: Date?
    public var relativePath: String

    public init(key: String, size: Int64, etag: String, lastModified: Date?, relativePath: String) {
        self.key = key
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.relativePath = relativePath
    }

    /// The ETag as an MD5 in hex when it is one (a single PUT); nil for multipart and R2's random ETags.
    package var plainMD5: String? {
        let value = etag.lowercased()
        guard value.utf8.count == 32, value.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        return value
    }
}

/// What happened to one pulled object.
public struct DownloadOutcome: Sendable, Equatable {
    public enum Result: String, Sendable, Codable {
        case downloaded
        /// An identical file was already there.
        case skipped
    }

    public var item: PullItem
    public var path: String
    public var result: Result
    /// Bytes found verified on disk from an earlier, interrupted run.
    public var resumedBytes: Int64
    /// Why the bytes could not be checked beyond their count (nil: checked, or skipped).
    public var unverified: String? = nil

    package init(item: PullItem, path: String, result: Result, resumedBytes: Int64, unverified: String? = nil) {
        self.item = item
        self.path = path
        self.result = result
        self.resumedBytes = resumedBytes
        self.unverified = unverified
    }
}
