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
}

/// Something the scan could not take, said in one line.
public struct ScanProblem: Sendable, Equatable, Codable {
    public var path: String
    public var message: String
}

/// Walks a folder with readdir and lstat (no per-file Foundation objects: a no-op sync of
/// 100,000 files must take seconds, not minutes).
public struct SyncScanner: Sendable {
    public var followSymlinks: Bool
    /// Skip names that start with "." (editors' and rsync's temporary files live there).
    public var skipHidden: Bool

    public init(followSymlinks: Bool = false, skipHidden: Bool = true) {
        self.followSymlinks = followSymlinks
        self.skipHidden = skipHidden
    }

    /// Regular files under `root` (an absolute, standardised folder path), and what was skipped.
    public func scan(_ root: String) -> (files: [ScannedFile], problems: [ScanProblem]) {
        var files: [ScannedFile] = []
        var problems: [ScanProblem] = []
        var info = stat()
        guard stat(root, &info) == 0 else {
            problems.append(ScanProblem(path: root, message: String(cString: strerror(errno))))
            return (files, problems)
        }
        var ancestors: Set<FileID> = [FileID(info)]
        walk(root, relative: "", ancestors: &ancestors, files: &files, problems: &problems)
        return (files, problems)
    }

    private func walk(
        _ folder: String, relative: String, ancestors: inout Set<FileID>,
        files: inout [ScannedFile], problems: inout [ScanProblem]
    ) {
        guard let handle = opendir(folder) else {
            problems.append(ScanProblem(path: folder, message: "cannot be read: \(String(cString: strerror(errno)))"))
            return
        }
        defer { closedir(handle) }
        let descriptor = dirfd(handle)
        var subfolders: [(path: String, relative: String, id: FileID)] = []
        while let entry = readdir(handle) {
            let rawName = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(validatingCString: $0) }
            }
            guard let name = rawName else {
                problems.append(ScanProblem(path: folder, message: "a file name there is not valid UTF-8; it was skipped"))
                continue
            }
            if name == "." || name == ".." { continue }
            if skipHidden && name.hasPrefix(".") { continue }
            let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            let inner = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }  // gone since readdir
            var kind = info.st_mode & S_IFMT
            if kind == S_IFLNK {
                guard followSymlinks else { continue }
                guard stat(path, &info) == 0 else {
                    problems.append(ScanProblem(path: path, message: "a symbolic link to nothing; skipped"))
                    continue
                }
                kind = info.st_mode & S_IFMT
            }
            if kind == S_IFREG {
                files.append(
                    ScannedFile(
                        path: path, relativePath: Self.nfc(inner), size: Int64(info.st_size),
                        mtimeNs: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                        ctimeNs: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)))
            } else if kind == S_IFDIR {
                subfolders.append((path, inner, FileID(info)))
            }
        }
        for sub in subfolders {
            // Only a followed link can lead back to a folder being walked.
            guard !ancestors.contains(sub.id) else {
                problems.append(ScanProblem(path: sub.path, message: "a symbolic link loop (it leads back to a folder above it); not followed"))
                continue
            }
            ancestors.insert(sub.id)
            walk(sub.path, relative: sub.relative, ancestors: &ancestors, files: &files, problems: &problems)
            ancestors.remove(sub.id)
        }
    }

    /// NFC, with a fast path for plain ASCII (most names).
    static func nfc(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text : text.precomposedStringWithCanonicalMapping
    }
}

/// A file's identity on its device.
struct FileID: Hashable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
