import Foundation

/// The catalog cache's metadata column, written and read without Foundation's JSON coders.
extension Store {
    /// The metadata column: a JSON object of strings, keys sorted by their bytes, `"`, `\\` and
    /// control characters escaped, without `JSONEncoder` (which took most of saving 10,000 rows).
    static func json(stringMap: [String: String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        func append(_ text: String) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        for (index, key) in stringMap.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            append(key)
            out.append(UInt8(ascii: ":"))
            append(stringMap[key] ?? "")
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// A JSON object of strings, as `json(stringMap:)` (or before it `JSONEncoder`) wrote the
    /// metadata column, read without `JSONDecoder` (a tenth of its time over 10,000 rows); nil
    /// for anything else (the caller then asks `JSONDecoder`).
    static func stringMap(json: String) -> [String: String]? {
        var text = json
        return text.withUTF8 { bytes -> [String: String]? in
            var reader = StringMapReader(bytes: bytes)
            return reader.object()
        }
    }
}

/// A cursor over the bytes of a JSON object of strings; each step returns nil where the text
/// is anything else.
private struct StringMapReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The whole text as one object, nothing but white space around it; a name given twice is refused.
    mutating func object() -> [String: String]? {
        var map: [String: String] = [:]
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                guard let name = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipSpace()
                guard let value = string(), map.updateValue(value, forKey: name) == nil else { return nil }
                skipSpace()
                guard index < bytes.count else { return nil }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "}") { break }
                guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
            }
        }
        skipSpace()
        return index == bytes.count ? map : nil
    }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func string() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard escape(into: &out) else { return nil }
            case 0..<0x20:
                return nil
            default:
                out.append(byte)
            }
        }
        return nil
    }

    /// The character after a backslash, appended as UTF-8; false for an escape JSON does not have.
    private mutating func escape(into out: inout [UInt8]) -> Bool {
        guard index < bytes.count else { return false }
        let escaped = bytes[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            guard var code = hex4() else { return false }
            if (0xD800...0xDBFF).contains(code) {
                // A high surrogate must be followed by \u and a low one.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return false }
                index += 2
                guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { return false }
            out.append(contentsOf: String(Character(scalar)).utf8)
        default:
            return false
        }
        return true
    }
}
