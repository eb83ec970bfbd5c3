public import Foundation

/// Signs requests with AWS Signature Version 4, in the header form and in the presigned (query) form.
///
/// A value: it holds credentials and a scope, reads no clock and no environment, and every call returns new
/// values. The only shared state is a cache of derived signing keys, which is thread-safe, so one signer can
/// serve any number of concurrent requests.
public struct Signer: Sendable {
    /// The credentials requests are signed with.
    public let credentials: Credentials
    /// The region of the credential scope, e.g. `us-east-1`, or `auto` for Cloudflare R2.
    public let region: String
    /// The service of the credential scope; `s3` switches on S3's path and header rules.
    public let service: String
    /// Whether the canonical path has its dot segments and repeated slashes removed; S3 signs paths as sent.
    public let normalizePath: Bool

    /// Lower-case names of headers never signed. They are set or rewritten along the way (by curl or a proxy),
    /// so signing them would only make valid requests fail. Internal so tests can reproduce the AWS suite's
    /// cases that do sign Content-Length.
    var unsignedHeaders: Set<String> = ["authorization", "content-length", "expect", "user-agent", "transfer-encoding"]

    let keyCache = SigningKeyCache()

    /// Creates a signer for one credential scope.
    /// - Parameters:
    ///   - credentials: the key pair, and a session token for temporary credentials.
    ///   - region: the scope's region.
    ///   - service: the scope's service name, `s3` unless you sign for another AWS service.
    ///   - normalizePath: whether to normalise paths before signing; by default every service but S3 does.
    public init(credentials: Credentials, region: String, service: String = "s3", normalizePath: Bool? = nil) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizePath = normalizePath ?? (service != "s3")
    }

    /// Signs `request` with headers.
    ///
    /// Returns the headers to add to the request: `x-amz-date`; `x-amz-content-sha256` (S3 only, where it is
    /// required); `x-amz-security-token` with temporary credentials; and `Authorization`. Send the request with
    /// `request.encodedPath` and `request.encodedQuery`, its own headers and these, and nothing else that
    /// changes what was signed.
    public func sign(_ request: SigningRequest, payload: PayloadHash, date: Date) -> [(name: String, value: String)] {
        headerSigning(request, payload: payload, date: date).items
    }

    /// Signs `request` in the presigned form, for a URL that works without any headers until it expires.
    ///
    /// Returns the complete query for the URL: the request's own items followed by `X-Amz-Algorithm`,
    /// `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders`, `X-Amz-Security-Token` (with
    /// temporary credentials; it is signed), and `X-Amz-Signature`. Put it on the URL through a
    /// `SigningRequest` whose `query` is this list, so it is encoded and ordered the way it was signed.
    /// - Parameters:
    ///   - seconds: how long the URL works, 1 to 604800 (seven days).
    ///   - payload: `.unsigned` for S3 URLs; other services sign the body's hash.
    /// - Throws: `SigV4Error.expiryOutOfRange` outside 1...604800 seconds.
    public func presign(
        _ request: SigningRequest, expires seconds: Int, date: Date, payload: PayloadHash = .unsigned
    ) throws(SigV4Error) -> [(name: String, value: String)] {
        try querySigning(request, expires: seconds, date: date, payload: payload).items
    }
}
