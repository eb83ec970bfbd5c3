import Foundation
public import R2UpModel

extension ObjectKey {
    /// Normalises a key to Unicode NFC (R2 stores NFC; macOS names files in NFD) and checks its length.
    public static func validated(_ key: String) throws(UploadError) -> String {
        let normalized = nfc(key)
        guard !normalized.isEmpty else { throw .invalidKey("the key is empty") }
        // "/x" would make "//x" URLs (and pull refuses such keys); "x/" reads as a folder, not a file.
        guard !normalized.hasPrefix("/") else { throw .invalidKey("the key '\(normalized)' starts with '/'; keys are relative, like albums/a.m4a") }
        guard !normalized.hasSuffix("/") else { throw .invalidKey("the key '\(normalized)' ends with '/', which names a folder, not a file") }
        let bytes = normalized.utf8.count
        guard bytes <= maximumBytes else {
            throw .invalidKey("the key is \(bytes) bytes long; S3 and R2 allow at most \(maximumBytes)")
        }
        return normalized
    }

    /// `validated`, for a key r2up is to write (an upload's, a copy's): S3 and R2 take a
    /// backslash, but pull refuses one (a separator on Windows, a zip-slip tool) and SeaweedFS
    /// stores it as '/', so push and pull agree by never writing one. Keys already in the
    /// bucket (rm, browse) are only `validated`.
    public static func validatedForWriting(_ key: String) throws(UploadError) -> String {
        let normalized = try validated(key)
        guard !normalized.contains("\\") else {
            throw .invalidKey(
                "the key '\(normalized)' holds a backslash, which pull refuses and some servers store as '/'; rename the file or give a key without one (\(OptionName.keyTemplate.option) turns '\\' into '_')")
        }
        return normalized
    }
}
