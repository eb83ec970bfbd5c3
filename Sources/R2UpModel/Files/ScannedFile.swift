import Foundation

/// One regular file found under the sync folder.
public struct ScannedFile: Sendable, Equatable {
    /// Absolute path on disk, spelled as the file system spells it.
    public var path: String
    /// Path inside the folder with `/` separators, normalised to Unicode NFC.
    public var relativePath: String
    public var size: Int64
    /// Modification time, nanoseconds since 1970.
    public var mtimeNs: Int64
    /// Status change time (ctime), nanoseconds since 1970: moves on with every write,
    /// even when a copier restores an old mtime (`cp -p`, `rsync -t`).
    public var ctimeNs: Int64
    /// Device and inode (`st_dev`, `st_ino` as stored): a renamed file keeps them.
    public var device: Int64 = 0
    public var inode: Int64 = 0

    package init(path: String, relativePath: String, size: Int64, mtimeNs: Int64, ctimeNs: Int64, device: Int64 = 0, inode: Int64 = 0) {
        self.path = path
        self.relativePath = relativePath
        self.size = size
        self.mtimeNs = mtimeNs
        self.ctimeNs = ctimeNs
        self.device = device
        self.inode = inode
    }
}
