import SigV4

/// Public URLs of objects (DESIGN §3): `PUBLIC_BASE/KEY`, each key segment percent-encoded, `/` kept.
public enum PublicURL {
    /// The URL people open: under the public base when one is set, else the path-style object URL.
    public static func make(key: String, bucket: String, publicBase: String?, endpoint: S3Endpoint) -> String {
        if var base = publicBase, !base.isEmpty {
            while base.hasSuffix("/") { base.removeLast() }
            return base + "/" + encode(key)
        }
        var pathStyle = endpoint
        pathStyle.addressing = .pathStyle
        return "\(endpoint.scheme)://\(pathStyle.authority(bucket: nil))\(encodePath(pathStyle.path(bucket: bucket, key: key)))"
    }

    /// The key with each segment RFC 3986-encoded once, the same rule the signer uses for paths.
    public static func encode(_ key: String) -> String {
        String(encodePath("/" + key).dropFirst())
    }

    private static func encodePath(_ path: String) -> String {
        SigningRequest(method: "GET", host: "", path: path, query: [], headers: []).encodedPath
    }
}
