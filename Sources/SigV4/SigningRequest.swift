/// The parts of an HTTP request that SigV4 signs, with the path and query decoded.
public struct SigningRequest: Sendable {
    public var method: String
    /// The Host header value, e.g. `127.0.0.1:8333` or `bucket.account.r2.cloudflarestorage.com`.
    public var host: String
    /// The decoded path, e.g. `/my bucket/a b+c%.m4a`.
    public var path: String
    /// Decoded query items in the order given.
    public var query: [(name: String, value: String)]
    /// Headers to sign besides Host.
    public var headers: [(name: String, value: String)]

    public init(
        method: String, host: String, path: String, query: [(name: String, value: String)],
        headers: [(name: String, value: String)]
    ) {
        self.method = method
        self.host = host
        self.path = path.isEmpty ? "/" : path
        self.query = query
        self.headers = headers
    }

    /// The path as it goes on the wire and into S3's canonical request: each segment encoded once, `/` kept.
    public var encodedPath: String { URIEncoding.encodePath(path, twice: false) }

    /// The query string: names and values RFC 3986-encoded, sorted by name then value.
    public var encodedQuery: String {
        query.map { (URIEncoding.encode($0.name), URIEncoding.encode($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}

/// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters kept, the rest as %XX of the UTF-8 bytes.
public enum URIEncoding {
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes every byte except A–Z a–z 0–9 - . _ ~.
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes each `/`-separated segment (twice for services other than S3).
    static func encodePath(_ path: String, twice: Bool) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { twice ? encode(encode(String($0))) : encode(String($0)) }
            .joined(separator: "/")
    }

    /// Removes `.` and `..` segments and empty segments, keeping a leading and trailing slash.
    static func normalize(_ path: String) -> String {
        var stack: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." {
                _ = stack.popLast()
                continue
            }
            stack.append(segment)
        }
        var result = "/" + stack.joined(separator: "/")
        if path.hasSuffix("/") && result != "/" { result += "/" }
        return result
    }
}
