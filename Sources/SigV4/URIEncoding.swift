/// Percent-encoding the way SigV4 defines it (RFC 3986): the unreserved characters `A-Z a-z 0-9 - . _ ~` stay,
/// every other UTF-8 byte becomes `%XX` with upper-case hex. A space is `%20`, never `+`.
public enum URIEncoding {
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes every byte of `text` except the unreserved characters (so `/` becomes `%2F`).
    public static func encode(_ text: String) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        append(text.utf8, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes each `/`-separated segment of `path`, keeping the slashes where they are.
    public static func encodePath(_ path: String) -> String {
        // Encoding each segment and keeping the slashes is encoding every byte but `/`.
        if path.utf8.allSatisfy({ $0 == UInt8(ascii: "/") || isUnreserved($0) }) { return path }
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count + 16)
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                out.append(byte)
            } else {
                append(CollectionOfOne(byte), to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Path normalisation for services other than S3: drops `.` segments, resolves `..`, collapses repeated
    /// slashes. A trailing slash survives, and a path that ended in `.` or `..` names a directory, so it gets
    /// one (RFC 3986 §5.2.4). Never climbs above the root.
    static func normalize(_ path: String) -> String {
        var kept: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        for segment in segments {
            switch segment {
            case ".": continue
            case "..": _ = kept.popLast()
            default: kept.append(segment)
            }
        }
        guard !kept.isEmpty else { return "/" }
        let endsAsDirectory = path.hasSuffix("/") || segments.last == "." || segments.last == ".."
        return "/" + kept.joined(separator: "/") + (endsAsDirectory ? "/" : "")
    }
}
