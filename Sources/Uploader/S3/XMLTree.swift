import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A small element tree for S3's XML replies, which are shallow and small.
struct XMLNode: Sendable {
    var name: String
    var text: String = ""
    var children: [XMLNode] = []

    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }
    /// The text of a direct child element, nil when absent.
    func value(_ name: String) -> String? { child(name)?.text }

    /// Parses a document; nil when the bytes are not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> XMLNode? {
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [XMLNode] = []
        var root: XMLNode?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            stack.append(XMLNode(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if !stack.isEmpty { stack[stack.count - 1].text += string }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard let node = stack.popLast() else { return }
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }
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
