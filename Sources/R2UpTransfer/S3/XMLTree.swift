import Foundation

/// A small element tree for S3's XML replies, which are shallow and small.
struct XMLNode: Sendable {
    var name: String
    var text: String = ""
    var children: [XMLNode] = []

    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }
    /// The text of a direct child element, nil when absent.
    func value(_ name: String) -> String? { child(name)?.text }

    /// Parses a document; nil when the bytes are not well-formed XML as S3 writes it.
    ///
    /// Hand-written, not FoundationXML: its XMLParser traps or reads a NULL pointer on some
    /// malformed replies (a name that is not UTF-8, odd namespace declarations; found by
    /// ReplyFuzzTests), and a server's reply must never crash r2up. S3's replies need only
    /// elements, text, the five named entities, character references, CDATA and comments;
    /// attributes are skipped, and a DOCTYPE (entity definitions) is refused.
    static func parse(_ bytes: [UInt8]) -> XMLNode? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        var reader = XMLReader(bytes: bytes)
        return reader.document()
    }
}

/// The parser behind `XMLNode.parse`: one pass over the bytes, at most `maxDepth` deep.
private struct XMLReader {
    let bytes: [UInt8]
    var index = 0
    static let maxDepth = 64

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func document() -> XMLNode? {
        var stack: [XMLNode] = []
        var root: XMLNode?
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                guard let text = self.text() else { return nil }
                if let top = stack.indices.last {
                    stack[top].text += text
                } else if !text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
                    return nil  // text outside the root element
                }
                continue
            }
            if starts(with: "<?") {
                guard skip(past: "?>") else { return nil }
            } else if starts(with: "<!--") {
                guard skip(past: "-->") else { return nil }
            } else if starts(with: "<![CDATA[") {
                index += 9
                let start = index
                guard skip(past: "]]>"), let top = stack.indices.last else { return nil }
                stack[top].text += String(decoding: bytes[start..<(index - 3)], as: UTF8.self)
            } else if starts(with: "<!") {
                return nil  // DOCTYPE and other declarations: S3 sends none
            } else if starts(with: "</") {
                index += 2
                guard let name = self.name(), skipBlanks(), expect(">"), let node = stack.popLast(), node.name == name else {
                    return nil
                }
                if let top = stack.indices.last {
                    stack[top].children.append(node)
                } else {
                    guard root == nil else { return nil }
                    root = node
                }
            } else {
                index += 1
                guard root == nil, stack.count < Self.maxDepth, let name = self.name(), let selfClosing = skipAttributes() else {
                    return nil
                }
                let node = XMLNode(name: name)
                if selfClosing {
                    if let top = stack.indices.last { stack[top].children.append(node) } else { root = node }
                } else {
                    stack.append(node)
                }
            }
        }
        return stack.isEmpty ? root : nil
    }

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return prefix.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private mutating func skip(past end: StaticString) -> Bool {
        while index < bytes.count {
            if starts(with: end) {
                index += end.utf8CodeUnitCount
                return true
            }
            index += 1
        }
        return false
    }

    private mutating func expect(_ byte: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
        index += 1
        return true
    }

    private mutating func skipBlanks() -> Bool {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return true
    }

    /// An element name: up to a blank, '/', '>' or '='.
    private mutating func name() -> String? {
        let start = index
        while index < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, 0x2F, 0x3E, 0x3D, 0x3C, 0x22, 0x27].contains(bytes[index]) {
            index += 1
        }
        guard index > start else { return nil }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Skips `name="value"` pairs up to '>' or '/>'; true for '/>', nil when malformed.
    private mutating func skipAttributes() -> Bool? {
        while true {
            _ = skipBlanks()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return false
            }
            if starts(with: "/>") {
                index += 2
                return true
            }
            guard name() != nil, skipBlanks(), expect("="), skipBlanks(), index < bytes.count else { return nil }
            let quote = bytes[index]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
            index += 1
            while index < bytes.count, bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "<") { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
        }
    }

    /// Character data up to the next '<', entities decoded; nil on a malformed reference.
    private mutating func text() -> String? {
        var out: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
            guard bytes[index] == UInt8(ascii: "&") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            guard let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { return nil }
            let entity = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            index = semicolon + 1
            switch entity {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                let hex = entity.hasPrefix("#x") || entity.hasPrefix("#X")
                guard entity.hasPrefix("#"), let code = UInt32(entity.dropFirst(hex ? 2 : 1), radix: hex ? 16 : 10),
                    let scalar = Unicode.Scalar(code), code != 0
                else { return nil }
                out += Array(String(Character(scalar)).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    /// Escapes text for an XML element body.
    var xmlEscaped: String {
        var out = ""
        out.reserveCapacity(count)
        for character in self {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
