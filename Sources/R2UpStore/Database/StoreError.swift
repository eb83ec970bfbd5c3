import Foundation
internal import GRDB
public import R2UpModel

/// Why the local store (the SQLite database) failed; every one means exit code 5.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The folder for the database could not be made.
    case cannotCreateDirectory(path: String, reason: String)
    /// The folder or the file cannot be written.
    case readOnly(path: String)
    /// SQLite could not open the file.
    case cannotOpen(path: String, reason: String)
    /// The file is damaged or is not an SQLite database; it is left untouched.
    case corrupt(path: String, reason: String)
    /// An SQLite database, but not one r2up made; it is left untouched.
    case foreignDatabase(path: String)
    /// A newer r2up has upgraded this database; this one does not know its schema.
    case newerVersion(path: String, unknownMigrations: [String])
    /// A read-only database (or folder) that an older r2up made: reading it needs an upgrade, which needs writing.
    case readOnlyNeedsUpgrade(path: String)
    /// Another process held the database longer than the busy timeout.
    case busy(path: String)
    /// No row with that identity.
    case notFound(String)
    /// The request contradicts what the store holds (e.g. completing a completed job).
    case conflict(String)
    /// Any other SQLite failure.
    case sqlite(code: Int32, message: String)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason):
            "cannot create the database folder \(path): \(reason)"
        case .readOnly(let path):
            "the database at \(path) cannot be written (read-only folder or file)"
        case .cannotOpen(let path, let reason):
            "cannot open the database at \(path): \(reason)"
        case .corrupt(let path, let reason):
            "the database at \(path) is damaged or not a database (\(reason)); it was left as it is"
        case .foreignDatabase(let path):
            "\(path) is an SQLite database that r2up did not make; it was left as it is (use \(OptionName.database.option) for another path)"
        case .newerVersion(let path, let unknown):
            "the database at \(path) was upgraded by a newer r2up (\(unknown.joined(separator: ", "))); use that version"
        case .readOnlyNeedsUpgrade(let path):
            "the database at \(path) is from an older r2up and cannot be written to upgrade it; run r2up once with write access to it (or its folder)"
        case .busy(let path):
            "the database at \(path) stayed locked by another process"
                + (Self.holders(of: path).map { " (\($0))" } ?? "") + "; try again when it is done"
        case .notFound(let what):
            "not found: \(what)"
        case .conflict(let what):
            what
        case .sqlite(let code, let message):
            "database error \(code): \(message)"
        }
    }

    /// The other processes that have the database open, as "pid 123 python3, pid 456 r2up",
    /// read from /proc (Linux); nil where none can be found.
    static func holders(of path: String) -> String? {
        #if !os(Linux)
        return nil  // found through /proc, which only Linux has
        #else
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        let targets = [path, path + "-wal", path + "-shm"].map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        var found: [String] = []
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd")
            else { continue }
            let holds = fds.contains { fd in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)")
                else { return false }
                return targets.contains(target)
            }
            guard holds else { continue }
            let name = (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            found.append("pid \(pid) \(name)")
            if found.count == 3 { break }
        }
        return found.isEmpty ? nil : "held by " + found.joined(separator: ", ")
        #endif
    }

    /// Maps a GRDB error met while using the database at `path`.
    static func wrap(_ error: any Error, path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? DatabaseError else {
            return .sqlite(code: -1, message: String(describing: error))
        }
        let reason = error.message ?? "SQLite code \(error.resultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .corrupt(path: path, reason: reason)
        case .SQLITE_READONLY, .SQLITE_PERM:
            return .readOnly(path: path)
        case .SQLITE_CANTOPEN:
            return .cannotOpen(path: path, reason: reason)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .busy(path: path)
        default:
            return .sqlite(code: error.resultCode.rawValue, message: reason)
        }
    }
}

extension StoreError: ClassifiedError {
    public var failureKind: FailureKind {
        if case .busy = self { return .storeBusy }
        return .store
    }

    public func diagnosis(subject: String?) -> Diagnosis {
        // The database, not the file being handled: its description names the path.
        Diagnosis(category: .storeFailure, message: description)
    }

    /// This failure as the transfer layer's upload journal carries it.
    public var journalError: JournalError { JournalError(failureKind: failureKind, description: description) }
}
