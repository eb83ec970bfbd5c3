import Foundation
public import R2UpModel

/// Why an object was not pulled, worded for the user (one line; the key or path is printed once).
public enum DownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key cannot be mapped to a file inside the destination; nothing was written.
    case unsafeKey(key: String, reason: String)
    /// Neither an object nor a folder of objects has this name.
    case notFound(target: String, bucket: String)
    /// The destination exists and is not a folder, or cannot be created.
    case badDestination(path: String, reason: String)
    /// The folder holding the file has less free space than the bytes still to fetch.
    case notEnoughSpace(path: String, needed: Int64, available: Int64)
    /// The file, its temporary copy or its resume record could not be written.
    case localFile(path: String, reason: String)
    /// The bytes fetched do not match the object (size or MD5); the temporary file was removed.
    case verificationFailed(key: String, reason: String)
    /// The object was replaced while it downloaded (its ETag changed).
    case objectChanged(key: String)
    case s3(key: String, S3ClientError)
    /// `status DIR --remote`: the store cannot say which prefix the folder maps to (no track
    /// there has a key, or their keys disagree).
    case unknownPrefix(folder: String, ambiguous: Bool)
    /// The local file is not the copy r2up last uploaded or downloaded (`known`), or r2up has no
    /// record of it: pull leaves it alone.
    case localChanges(path: String, known: Bool)

    public var description: String {
        switch self {
        case .unsafeKey(let key, let reason):
            return "\(TextColumns.printable(key)): refused: \(reason); rename the object in the bucket (nothing was written)"
        case .notFound(let target, let bucket):
            return "no object or folder '\(TextColumns.printable(target))' in bucket '\(bucket)'"
        case .badDestination(let path, let reason):
            return "\(path): \(reason)"
        case .notEnoughSpace(let path, let needed, let available):
            return "\(path): not enough free space: \(ByteCount.string(needed)) needed, \(ByteCount.string(available)) available; free some space or pull elsewhere"
        case .localFile(let path, let reason):
            return "\(path): \(reason)"
        case .verificationFailed(let key, let reason):
            return "\(TextColumns.printable(key)): the download does not match the object: \(reason); pull it again"
        case .objectChanged(let key):
            return "\(TextColumns.printable(key)): the object changed while it downloaded; pull it again"
        case .unknownPrefix(let folder, let ambiguous):
            let folder = TextColumns.printable(folder)
            return ambiguous
                ? "the tracks in \(folder) are under different prefixes; give \(OptionName.prefix.option)"
                : "no track in \(folder) says which prefix it maps to; give \(OptionName.prefix.option)"
        case .localChanges(let path, let known):
            let what = known ? "changed here since r2up last uploaded or downloaded it" : "a file r2up has no record of is there"
            return "\(TextColumns.printable(path)): \(what); not replaced (\(OptionName.overwrite.option) replaces it)"
        case .s3(let key, let error):
            return Diagnosis(error, subject: Self.subject(key)).message
        }
    }

    /// The outcome's category and the line to print (DESIGN §3): refused keys and bad names are bad input.
    public var diagnosis: Diagnosis {
        switch self {
        case .unsafeKey, .notFound, .badDestination, .unknownPrefix:
            return Diagnosis(category: .badInput, message: description)
        case .s3(let key, let error):
            // The shared wording speaks of writing; a pull reads.
            if case .service(let failure) = error, failure.code == "AccessDenied", !failure.codeFromStatus {
                return Diagnosis(
                    category: .configuration,
                    message: "access denied (AccessDenied); the credentials are not allowed to read this bucket")
            }
            return Diagnosis(error, subject: Self.subject(key))
        default:
            return Diagnosis(category: .uploadFailed, message: description)
        }
    }

    /// The key that starts the line; none for a request about no key (`status --remote`'s
    /// listing of the whole bucket printed "r2up: : …").
    private static func subject(_ key: String) -> String? { key.isEmpty ? nil : TextColumns.printable(key) }

    /// The transfer was cancelled (Ctrl-C, SIGTERM): left to resume, not failed.
    public var isCancellation: Bool {
        if case .s3(_, let error) = self { return error.failureKind == .cancelled }
        return false
    }
}

extension DownloadError {
    /// What a failed fetch tells the depth (`DepthController`).
    var depthOutcome: DepthController.Outcome {
        if case .s3(_, let error) = self { return DepthController.Outcome(error.failureKind) }
        return .completed
    }
}
