import Foundation
import SigV4

/// Where an object's bytes go on disk, and the checks that keep them inside the destination.
public enum DownloadPath {
    /// The path of `key` relative to the destination folder: the part after `prefix`
    /// (a folder pull keeps the folders below it), or the key's last segment for a single object.
    ///
    /// Refuses a key that could lead elsewhere: a `..` segment, a leading `/`, a backslash
    /// (a separator on Windows and in zip-slip attacks), empty or `.` segments, a NUL byte.
    public static func relativePath(key: String, prefix: String?) throws(DownloadError) -> String {
        if key.contains("\\") {
            throw .unsafeKey(key: key, reason: "it contains a backslash, a path separator on Windows")
        }
        if key.hasPrefix("/") {
            throw .unsafeKey(key: key, reason: "it starts with '/', an absolute path")
        }
        if key.contains("\0") {
            throw .unsafeKey(key: key, reason: "it contains a NUL byte")
        }
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains("..") {
            throw .unsafeKey(key: key, reason: "a '..' segment would lead outside the destination")
        }
        let relative: Substring
        if let prefix, !prefix.isEmpty {
            guard key.hasPrefix(prefix) else {
                throw .unsafeKey(key: key, reason: "it is not under the prefix '\(prefix)'")
            }
            relative = key.dropFirst(prefix.count)
        } else if prefix != nil {
            relative = Substring(key)
        } else {
            relative = segments.last ?? ""
        }
        if relative.hasPrefix("/") {
            throw .unsafeKey(key: key, reason: "below the prefix it starts with '/', an absolute path")
        }
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        if relative.isEmpty || parts.contains(where: { $0.isEmpty || $0 == "." }) {
            throw .unsafeKey(key: key, reason: "it has an empty or '.' path segment")
        }
        return String(relative)
    }

    /// `destination/relative`, after checking that the real folder it lands in (links
    /// resolved, the folders created) is still inside the real destination.
    package static func prepareFolder(for relative: String, in destination: String) throws(DownloadError) -> String {
        let target = destination + "/" + relative
        let folder = (target as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .localFile(path: folder, reason: "cannot create the folder: \(reason(error))")
        }
        guard let realRoot = realPath(destination), let realFolder = realPath(folder) else {
            throw .localFile(path: folder, reason: "cannot resolve the folder")
        }
        guard realFolder == realRoot || realFolder.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            throw .unsafeKey(key: relative, reason: "a link in the destination leads outside it (\(realFolder))")
        }
        return target
    }

    /// The hidden temporary file beside `path` and its resume record.
    static func temporaryPaths(for path: String) -> (data: String, record: String) {
        let folder = (path as NSString).deletingLastPathComponent
        var name = (path as NSString).lastPathComponent
        // Keep the hidden names under NAME_MAX (255 bytes) however long the file's name is.
        if name.utf8.count > 200 {
            name = String(decoding: Array(name.utf8.prefix(150)), as: UTF8.self) + "-"
                + Digest.sha256Hex(Array(name.utf8)).prefix(16)
        }
        return (folder + "/." + name + ".r2up-part", folder + "/." + name + ".r2up-resume")
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    package static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return (error as NSError).localizedDescription
    }
}
