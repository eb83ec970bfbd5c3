import Foundation

/// Object key rules shared by every command.
public enum ObjectKey {
    public static let maximumBytes = 1024

    /// `text` in Unicode NFC. ASCII is NFC already, and Foundation's normalisation costs
    /// microseconds a call: most names take the fast path.
    public static func nfc(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text : text.precomposedStringWithCanonicalMapping
    }

    /// Why `prefix` cannot start keys, or nil: a leading '/' would make "//" URLs.
    public static func prefixProblem(_ prefix: String) -> String? {
        guard prefix.hasPrefix("/") else { return nil }
        return "\(OptionName.prefix.option) '\(prefix)' starts with '/'; a prefix is relative, like albums/2026/"
    }

    /// The key for a file: the prefix (a "/" added when missing) and the file's name.
    public static func forFile(named name: String, prefix: String?) -> String {
        guard let prefix, !prefix.isEmpty else { return name }
        return prefix.hasSuffix("/") ? prefix + name : prefix + "/" + name
    }
}
