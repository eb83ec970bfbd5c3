import Foundation
package import R2UpModel
import R2UpTransfer

/// Something the scan could not take, said in one line.
package struct ScanProblem: Sendable, Equatable, Codable {
    package var path: String
    package var message: String
    /// A folder that could not be read: files under it may have been missed.
    package var unreadFolder = false

    package init(path: String, message: String, unreadFolder: Bool = false) {
        self.path = path
        self.message = message
        self.unreadFolder = unreadFolder
    }

    /// What it costs the run that scanned `root`: a folder it could not read hid files (a failed
    /// upload), `root` itself being unreadable is bad input; anything else was only skipped.
    package func category(root: String) -> FailureCategory? {
        guard unreadFolder else { return nil }
        return path == root ? .badInput : .uploadFailed
    }
}

/// Walks a folder with readdir and lstat (no per-file Foundation objects: a no-op sync of
/// 100,000 files must take seconds, not minutes), each folder's entries in byte order.
package struct SyncScanner: Sendable {
    package var followSymlinks: Bool
    /// Skip names that start with "." (editors' and rsync's temporary files live there).
    package var skipHidden: Bool

    package init(followSymlinks: Bool = false, skipHidden: Bool = true) {
        self.followSymlinks = followSymlinks
        self.skipHidden = skipHidden
    }

    /// Hands each regular file under `root` to `visit` in the byte order of its path (SQLite's
    /// order of `tracks.path`), so a sync can walk the store beside it instead of holding
    /// 100,000 files and tracks in memory. Returns what was skipped.
    package func scan<E: Error>(_ root: String, visit: (ScannedFile) throws(E) -> Void) throws(E) -> [ScanProblem] {
        var problems: [ScanProblem] = []
        var info = stat()
        guard stat(root, &info) == 0 else {
            let failure = errno
            let unread = failure != ENOENT && failure != ENOTDIR
            problems.append(ScanProblem(
                path: root, message: (unread ? "cannot be read: " : "") + String(cString: strerror(failure)), unreadFolder: unread))
            return problems
        }
        var ancestors: Set<FileID> = [FileID(info)]
        try walk(root, relative: "", ancestors: &ancestors, problems: &problems, visit: visit)
        return problems
    }

    /// One entry of a folder, sorted by `order`: the name's bytes, with "/" after a folder's,
    /// which puts "a/x" after "a-b" as a byte-wise sort of whole paths does.
    private struct Entry {
        var name: String
        var order: [UInt8]
        var info: stat
        var isFolder: Bool
    }

    private func walk<E: Error>(
        _ folder: String, relative: String, ancestors: inout Set<FileID>, problems: inout [ScanProblem],
        visit: (ScannedFile) throws(E) -> Void
    ) throws(E) {
        var entries: [Entry] = []
        do {
            guard let handle = opendir(folder) else {
                problems.append(ScanProblem(path: folder, message: "cannot be read: \(String(cString: strerror(errno)))", unreadFolder: true))
                return
            }
            defer { closedir(handle) }
            let descriptor = dirfd(handle)
            var unreachable = false
            while let entry = readdir(handle) {
                let rawName = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                    pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(validatingCString: $0) }
                }
                guard let name = rawName else {
                    let bytes = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                        pointer.withMemoryRebound(to: UInt8.self, capacity: Int(NAME_MAX) + 1) {
                            Array(UnsafeBufferPointer(start: $0, count: strlen(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))))
                        }
                    }
                    problems.append(ScanProblem(path: Self.join(folder, FilePath.escaped(bytes)), message: FilePath.notUTF8))
                    continue
                }
                if name == "." || name == ".." { continue }
                if skipHidden && name.hasPrefix(".") { continue }
                var info = stat()
                guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                    // Gone since readdir, or a folder listed but not searchable (mode r without x):
                    // its files cannot be taken, and that is said once.
                    if errno != ENOENT && !unreachable {
                        unreachable = true
                        problems.append(ScanProblem(
                            path: folder, message: "cannot be read: \(String(cString: strerror(errno)))", unreadFolder: true))
                    }
                    continue
                }
                var kind = info.st_mode & S_IFMT
                if kind == S_IFLNK {
                    guard followSymlinks else { continue }
                    guard fstatat(descriptor, name, &info, 0) == 0 else {
                        problems.append(ScanProblem(path: Self.join(folder, name), message: "a symbolic link to nothing; skipped"))
                        continue
                    }
                    kind = info.st_mode & S_IFMT
                }
                guard kind == S_IFREG || kind == S_IFDIR else { continue }
                let isFolder = kind == S_IFDIR
                entries.append(Entry(name: name, order: Array(name.utf8) + (isFolder ? [0x2F] : []), info: info, isFolder: isFolder))
            }
        }
        entries.sort { $0.order.lexicographicallyPrecedes($1.order) }
        for entry in entries {
            let path = Self.join(folder, entry.name)
            let inner = relative.isEmpty ? entry.name : relative + "/" + entry.name
            let info = entry.info
            guard entry.isFolder else {
                try visit(
                    ScannedFile(
                        path: path, relativePath: ObjectKey.nfc(inner), size: Int64(info.st_size),
                        mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs,
                        device: Int64(truncatingIfNeeded: info.st_dev), inode: Int64(truncatingIfNeeded: info.st_ino)))
                continue
            }
            let id = FileID(info)
            // Only a followed link can lead back to a folder being walked.
            guard !ancestors.contains(id) else {
                problems.append(ScanProblem(path: path, message: "a symbolic link loop (it leads back to a folder above it); not followed"))
                continue
            }
            ancestors.insert(id)
            try walk(path, relative: inner, ancestors: &ancestors, problems: &problems, visit: visit)
            ancestors.remove(id)
        }
    }

    private static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
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
