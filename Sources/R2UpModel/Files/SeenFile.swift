import Foundation

/// A file's size and modification time as a folder scan saw them.
public struct SeenFile: Sendable, Equatable {
    public var size: Int64
    public var mtimeNs: Int64

    public init(size: Int64, mtimeNs: Int64) {
        self.size = size
        self.mtimeNs = mtimeNs
    }
}
