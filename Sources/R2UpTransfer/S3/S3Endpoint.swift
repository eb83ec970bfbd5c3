import Foundation
public import R2UpModel

/// Where the S3 API lives and how buckets are addressed on it.
public struct S3Endpoint: Sendable, Equatable {
    public enum Addressing: String, Sendable, Equatable {
        /// `https://host/bucket/key`: works with every provider (R2, MinIO, SeaweedFS).
        case pathStyle
        /// `https://bucket.host/key`
        case virtualHosted
    }

    public var scheme: String
    public var host: String
    public var port: Int?
    /// Any path the endpoint URL carried before the bucket (rare; kept for proxies).
    public var basePath: String
    public var addressing: Addressing

    /// Parses an endpoint such as `https://ACCOUNT.r2.cloudflarestorage.com` or `http://127.0.0.1:8333`.
    public init(url text: String, addressing: Addressing = .pathStyle) throws(ConfigurationError) {
        guard URLText.problem(text) == nil, let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = components.host,
            !host.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
        else {
            throw ConfigurationError.invalidEndpoint(text)
        }
        self.scheme = scheme
        self.host = host.lowercased()
        port = components.port
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path.removingPercentEncoding ?? path
        self.addressing = addressing
    }

    /// True for Cloudflare R2's S3 API hosts.
    public var isR2: Bool { host.hasSuffix(".r2.cloudflarestorage.com") }

    /// Whether requests go over TLS (each connection then costs more memory).
    public var usesTLS: Bool { scheme == "https" }

    /// The S3 endpoint URL of a Cloudflare account's R2.
    public static func r2URL(account: String) -> String { "https://\(account).r2.cloudflarestorage.com" }

    /// The Host header value (with a port only when it is not the scheme's default).
    package func authority(bucket: String?) -> String {
        var name = host
        if addressing == .virtualHosted, let bucket, !bucket.isEmpty { name = "\(bucket).\(host)" }
        if name.utf8.contains(UInt8(ascii: ":")) { name = "[\(name)]" }  // an IPv6 literal
        if let port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) { return "\(name):\(port)" }
        return name
    }

    /// The decoded request path for a bucket and key.
    package func path(bucket: String?, key: String?) -> String {
        var path = basePath
        if let bucket, !bucket.isEmpty, addressing == .pathStyle { path += "/" + bucket }
        if let key { path += "/" + key } else if path.isEmpty || addressing == .pathStyle { path += "/" }
        return path.isEmpty ? "/" : path
    }
}
