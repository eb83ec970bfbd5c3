import Foundation
public import R2UpModel

/// Why an upload did not finish, with what the user needs to act on it.
public enum UploadError: Error, Sendable, Equatable, CustomStringConvertible {
    case fileNotFound(String)
    case notARegularFile(String)
    case fileUnreadable(path: String, reason: String)
    /// The file's size or modification time changed while it uploaded; nothing was published.
    case fileChanged(String)
    /// The file was deleted while it uploaded; nothing was published, and nothing is left to send.
    case fileDeleted(String)
    case invalidPartSize(Int64)
    case fileTooLarge(Int64)
    case invalidKey(String)
    /// The server stored something other than what was sent.
    case verificationFailed(key: String, reason: String)
    /// The server answered the write, but the check that the object is there failed for good
    /// (its HEAD kept failing): the object is most likely stored, unconfirmed; `r2up retry`
    /// looks again and takes it when it is this file's.
    case unconfirmed(key: String, reason: String)
    case s3(S3ClientError)
    /// The store could not record a step of the upload (the database, not the file).
    case store(JournalError)
    /// The key holds an object this upload must not replace (another track's, one changed
    /// behind r2up's back, or any with `--no-clobber`); nothing was replaced.
    case keyConflict(key: String, reason: String)

    /// The file is no longer at its path (deleted or renamed, before or during its upload).
    public var fileIsGone: Bool {
        switch self {
        case .fileNotFound, .fileDeleted: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .fileNotFound(let path): return "\(path): no such file"
        case .notARegularFile(let path): return "\(path): not a regular file (a directory, FIFO or device cannot be uploaded)"
        case .fileUnreadable(let path, let reason): return "\(path): cannot be read: \(reason)"
        case .fileChanged(let path): return "\(path): the file changed while it was uploading; it was not published and will be uploaded again"
        case .fileDeleted(let path): return "\(path): the file was deleted or moved while it was uploading; nothing was published"
        case .invalidPartSize(let size):
            return "part size \(size) bytes is out of range; it must be from 5 MiB to 5 GiB"
        case .fileTooLarge(let size): return "\(size) bytes is more than 10,000 parts of 5 GiB can hold"
        case .invalidKey(let reason): return "invalid object key: \(reason)"
        case .verificationFailed(let key, let reason): return "\(key): the stored object does not match: \(reason)"
        case .unconfirmed(let key, let reason):
            return "\(key): the upload was answered but could not be confirmed: \(reason); \(Remedy.retryTriesAgain)"
        case .s3(let error): return error.description
        case .store(let error): return error.description
        case .keyConflict(let key, let reason): return "the key '\(key)' \(reason); not replaced (\(OptionName.overwrite.option) replaces it)"
        }
    }
}
