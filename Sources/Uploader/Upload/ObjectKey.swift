import Foundation

/// Object key rules shared by every command.
public enum ObjectKey {
    public static let maximumBytes = 1024

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

    /// `text` in Unicode NFC. ASCII is NFC already, and Foundation's normalisation costs
    /// microseconds a call: most names take the fast path.
    public static func nfc(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text : text.precomposedStringWithCanonicalMapping
    }

    /// Why `prefix` cannot start keys, or nil: a leading '/' would make "//" URLs.
    public static func prefixProblem(_ prefix: String) -> String? {
        guard prefix.hasPrefix("/") else { return nil }
        return "--prefix '\(prefix)' starts with '/'; a prefix is relative, like albums/2026/"
    }

    /// The key for a file: the prefix (a "/" added when missing) and the file's name.
    public static func forFile(named name: String, prefix: String?) -> String {
        guard let prefix, !prefix.isEmpty else { return name }
        return prefix.hasSuffix("/") ? prefix + name : prefix + "/" + name
    }
}
