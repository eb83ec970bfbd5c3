import Foundation

/// Path text helpers for the per-file hot path, where Foundation's URL and NSString
/// versions cost microseconds a call.
public enum FilePath {
    /// The message for a name that is not valid UTF-8 (keys and URLs need text), the same for push and sync.
    public static let notUTF8 = "the file name is not valid UTF-8, so it cannot be a key; rename the file (skipped)"

    /// Raw name bytes for a message: printable ASCII as it is, every other byte as \xNN.
    public static func escaped<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var text = ""
        for byte in bytes {
            if (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return text
    }

    /// The last component, as `NSString.lastPathComponent` gives it for a file's path.
    package static func name(_ path: String) -> String {
        var bytes = path.utf8[...]
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), bytes.count > 1 else { return String(Substring(bytes)) }
        return String(Substring(bytes[bytes.index(after: slash)...]))
    }

    /// The absolute path with `.` and `..` resolved, as `URL.standardizedFileURL` makes it.
    /// An absolute path with nothing to resolve is returned as it is.
    package static func absolute(_ path: String) -> String {
        if isPlainAbsolute(path) { return path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Starts with `/`, has no empty, `.` or `..` component and no trailing `/`.
    private static func isPlainAbsolute(_ path: String) -> Bool {
        guard path.utf8.count > 1, path.utf8.first == UInt8(ascii: "/"), path.utf8.last != UInt8(ascii: "/") else {
            return false
        }
        for component in path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty { return false }
            if component.count <= 2, component.allSatisfy({ $0 == UInt8(ascii: ".") }) { return false }
        }
        return true
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
