import Foundation

/// A header value as r2up will send it: no CR, LF or other control character, which would end
/// the header early and let the rest be read as another header (header injection).
public enum HeaderValue {
    /// Why `value` cannot be sent as a header value, or nil.
    public static func problem(_ value: String) -> String? {
        guard let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return "it holds a control character (U+\(String(format: "%04X", bad.value)))"
    }
}

/// A public URL base (`--public-url`, R2UP_PUBLIC_URL, `public_url`): what object URLs are built
/// on, so it is checked before anything is sent, not found wrong after an upload.
public enum PublicBase {
    /// The base without trailing slashes, or why it is not one.
    public static func validated(_ text: String) -> Result<String, PublicBaseError> {
        if let problem = URLText.problem(text) { return .failure(PublicBaseError(text: text, reason: problem)) }
        guard text.contains("://") else {
            return .failure(PublicBaseError(text: text, reason: "it has no scheme; give it as https://\(text)"))
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return .failure(PublicBaseError(text: text, reason: "it is not an http(s) URL")) }
        guard let host = components.host, !host.isEmpty else {
            return .failure(PublicBaseError(text: text, reason: "it has no host"))
        }
        guard components.query == nil, components.fragment == nil else {
            return .failure(PublicBaseError(text: text, reason: "a query (?…) or fragment (#…) cannot go before a key"))
        }
        guard components.user == nil, components.password == nil else {
            return .failure(PublicBaseError(text: text, reason: "it holds a user name or password"))
        }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        return .success(base)
    }
}

public struct PublicBaseError: Error, Equatable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "the public URL '\(text)' is not valid: \(reason)" }
}

/// Text that is to be a URL: printable, no spaces, every `%` starting a valid escape.
package enum URLText {
    package static func problem(_ text: String) -> String? {
        if text.isEmpty { return "it is empty" }
        if text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "it holds a space or control character"
        }
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2])
                else { return "'%' must start an escape like %20" }
                index += 3
                continue
            }
            index += 1
        }
        return nil
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}

/// S3's bucket naming rules, checked before any request (R2's are a subset of them).
public enum BucketName {
    /// The rule `name` breaks, or nil.
    public static func problem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return "a bucket name is 3 to 63 characters long" }
        let allowed = bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D }
        guard allowed else { return "a bucket name holds only lower-case letters, digits, '.' and '-'" }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        guard alphanumeric(bytes[0]), alphanumeric(bytes[bytes.count - 1]) else {
            return "a bucket name starts and ends with a letter or digit"
        }
        guard !name.contains("..") else { return "a bucket name has no two adjacent dots" }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) { return "a bucket name is not an IP address" }
        return nil
    }
}
