import Foundation

/// `application/x-www-form-urlencoded` (a form's body, a query string): names to values.
/// Refuses what is not UTF-8 after decoding, so a bad path never reaches the library.
struct FormData: Sendable {
    private(set) var fields: [String: String] = [:]

    /// nil when a part is not valid percent-encoded UTF-8.
    init?(_ text: Substring) {
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(pieces[0]) else { return nil }
            let value = pieces.count > 1 ? Self.decode(pieces[1]) : ""
            guard let value else { return nil }
            if fields[name] == nil { fields[name] = value }
        }
    }

    subscript(_ name: String) -> String? { fields[name] }

    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex, utf8.index(after: high) < utf8.endIndex,
                    let h = hex(utf8[high]), let l = hex(utf8[utf8.index(after: high)])
                else { return nil }
                bytes.append(h << 4 | l)
                index = utf8.index(after: high)
            } else {
                bytes.append(byte)
            }
            index = utf8.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
