import Foundation
import GRDB

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
            "\(path) is an SQLite database that r2up did not make; it was left as it is (use --db for another path)"
        case .newerVersion(let path, let unknown):
            "the database at \(path) was upgraded by a newer r2up (\(unknown.joined(separator: ", "))); use that version"
        case .readOnlyNeedsUpgrade(let path):
            "the database at \(path) is from an older r2up and cannot be written to upgrade it; run r2up once with write access to it (or its folder)"
        case .busy(let path):
            "the database at \(path) stayed locked by another process"
        case .notFound(let what):
            "not found: \(what)"
        case .conflict(let what):
            what
        case .sqlite(let code, let message):
            "database error \(code): \(message)"
        }
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
