/// The parts of an HTTP request that SigV4 covers. Path and query are given decoded; the request produces
/// their wire form itself, so what is sent is exactly what was signed.
public struct SigningRequest: Sendable {
    /// The HTTP method as sent, e.g. `GET` or `PUT`.
    public var method: String
    /// The Host header value, e.g. `127.0.0.1:8333` or `bucket.account.r2.cloudflarestorage.com`.
    public var host: String
    /// The decoded path, e.g. `/my bucket/a b+c%.m4a`; `/` when empty.
    public var path: String
    /// Decoded query items in the order given; a valueless item such as `?uploads` has an empty value.
    public var query: [(name: String, value: String)]
    /// Headers to sign besides Host, with names in any case. The signer adds its own `x-amz-*` headers and
    /// Authorization, so leave those out.
    public var headers: [(name: String, value: String)]

    /// Creates a request from its decoded path and query; an empty path means `/`.
    public init(
        method: String, host: String, path: String, query: [(name: String, value: String)] = [],
        headers: [(name: String, value: String)] = []
    ) {
        self.method = method
        self.host = host
        self.path = path.isEmpty ? "/" : path
        self.query = query
        self.headers = headers
    }

    /// The path exactly as it goes on the wire, and as S3 signs it: each segment RFC 3986-encoded once,
    /// `/` kept, a leading `/` added if missing.
    public var encodedPath: String {
        let encoded = URIEncoding.encodePath(path)
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// The query string for the wire and for the canonical request: names and values RFC 3986-encoded,
    /// sorted by encoded name and then encoded value (byte order), joined with `&`. An empty value gives `name=`.
    public var encodedQuery: String {
        let encoded = query.map { (name: URIEncoding.encode($0.name), value: URIEncoding.encode($0.value)) }
        let sorted = encoded.sorted { left, right in
            left.name == right.name
                ? left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
                : left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
        }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}
