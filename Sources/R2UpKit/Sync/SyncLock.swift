import Foundation
package import R2UpModel

/// One sync per database: an flock(2) on a file beside it, holding the owner's pid.
///
/// The kernel drops the lock when its process dies however it dies, so a killed run
/// never blocks the next one; the pid inside is only there for the message.
package final class SyncLock: Sendable {
    package let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The lock file for a database.
    package static func path(forDatabase database: String) -> String { database + ".sync-lock" }

    /// Takes the lock, or throws `.locked` at once when another process holds it.
    /// - Parameters:
    ///   - path: the lock file (``path(forDatabase:)``).
    ///   - holder: the command taking it ("sync", "watch"), named to a second run.
    /// - Returns: the lock, held until it is released or the process ends.
    package static func acquire(path: String, holder: String = "sync") throws(SyncError) -> SyncLock {
        let fd = try openFile(path)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            let owner = readOwner(fd)
            close(fd)
            if failure == EWOULDBLOCK { throw .locked(pid: owner.pid, command: owner.command) }
            throw .lockFailed(path: path, reason: String(cString: strerror(failure)))
        }
        return claim(fd, path: path, holder: holder)
    }

    /// Takes the lock, polling until the other run ends (`--wait`).
    package static func acquireWaiting(
        path: String, holder: String = "sync", poll: Duration = .milliseconds(200)
    ) async throws(SyncError) -> SyncLock {
        while true {
            do {
                return try acquire(path: path, holder: holder)
            } catch .locked {
                // Polling keeps the cooperative pool free; a blocking flock would hold a thread.
                try? await Task.sleep(for: poll)
                if Task.isCancelled { throw .locked(pid: nil) }
            }
        }
    }

    private static func openFile(_ path: String) throws(SyncError) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .lockFailed(path: path, reason: String(cString: strerror(errno))) }
        return fd
    }

    private static func claim(_ fd: Int32, path: String, holder: String) -> SyncLock {
        // A sync writes its pid alone, as it always did; another holder adds its name below it.
        let text = holder == "sync" ? "\(getpid())\n" : "\(getpid())\n\(holder)\n"
        _ = ftruncate(fd, 0)
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        return SyncLock(path: path, descriptor: fd)
    }

    /// The pid on the first line, and the command on the second ("sync" when there is none).
    private static func readOwner(_ fd: Int32) -> (pid: Int32?, command: String) {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return (nil, "sync") }
        let lines = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let command = lines.count > 1 && ["sync", "watch"].contains(lines[1]) ? lines[1] : "sync"
        return (lines.first.flatMap { Int32($0) }, command)
    }
}

/// Why a sync could not run at all.
package enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    case locked(pid: Int32?, command: String = "sync")
    case lockFailed(path: String, reason: String)
    case notAFolder(String, command: String = "sync")
    /// Not a folder: a file, or (`special`) a FIFO, socket or device; `command` is what took it.
    case isAFile(String, special: Bool = false, command: String = "sync")

    /// A folder that exists and cannot be read or entered (permissions).
    case cannotRead(String, reason: String)

    /// `--delete` of a folder with nothing in it: a disk not mounted must never empty the bucket.
    case emptyForDelete(String, command: String = "sync")

    /// Checks the folder a sync or watch is given: there, a folder, and readable.
    package static func checkFolder(_ path: String, command: String) throws(SyncError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let failure = errno
            if failure == ENOENT || failure == ENOTDIR { throw .notAFolder(path, command: command) }
            throw .cannotRead(path, reason: String(cString: strerror(failure)))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw notFolder(path, command: command) }
        guard access(path, R_OK | X_OK) == 0 else { throw .cannotRead(path, reason: String(cString: strerror(errno))) }
    }

    /// `--delete`: the folder must also hold something (a name other than . and ..).
    package static func checkFolderToMirror(_ path: String, command: String) throws(SyncError) {
        try checkFolder(path, command: command)
        guard let handle = opendir(path) else { throw .cannotRead(path, reason: String(cString: strerror(errno))) }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { return }
        }
        throw .emptyForDelete(path, command: command)
    }

    /// The refusal of a path that exists and is no folder.
    package static func notFolder(_ path: String, command: String) -> SyncError {
        var info = stat()
        return .isAFile(path, special: stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFREG, command: command)
    }

    package var description: String {
        switch self {
        case .locked(let pid, let command):
            let owner = pid.map { " (pid \($0))" } ?? ""
            return "another r2up \(command)\(owner) is running; use \(OptionName.wait.option) to wait for it"
        case .lockFailed(let path, let reason):
            return "cannot take the sync lock \(path): \(reason)"
        case .notAFolder(let path, let command):
            return "\(path): no such folder; give the folder to \(command)"
        case .cannotRead(let path, let reason):
            return "\(path): cannot be read: \(reason)"
        case .emptyForDelete(let path, let command):
            return "\(path) is empty; \(command) \(OptionName.delete.option) refuses to remove every object it uploaded from it (is a disk not mounted?); nothing done"
        case .isAFile(let path, let special, let command):
            let what = special ? "is not a folder" : "is a file, not a folder"
            return "\(path) \(what); \(command) takes a folder (\(Remedy.pushUploadsFiles))"
        }
    }

    /// The category DESIGN §3 gives it (the CLI's exit code), with the line to print.
    package var diagnosis: Diagnosis {
        switch self {
        case .locked: Diagnosis(category: .locked, message: description)
        case .lockFailed: Diagnosis(category: .storeFailure, message: description)
        case .notAFolder, .isAFile, .cannotRead, .emptyForDelete: Diagnosis(category: .badInput, message: description)
        }
    }
}
