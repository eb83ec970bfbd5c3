import Foundation
import Synchronization

/// AWS credentials. Printing them never shows the secret or the session token.
public struct Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "Credentials(accessKeyID: \(accessKeyID), secretAccessKey: ****\(sessionToken == nil ? "" : ", sessionToken: ****"))"
    }

    public var debugDescription: String { description }
}

/// The payload hash that goes into the signature.
public enum PayloadHash: Sendable, Equatable {
    /// `UNSIGNED-PAYLOAD`: the body is not part of the signature (Content-MD5 protects it instead).
    case unsigned
    /// The hex SHA-256 of the body.
    case sha256(hex: String)

    /// The hash of an empty body.
    public static let empty = PayloadHash.sha256(hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    /// The value of `x-amz-content-sha256` and the last line of the canonical request.
    public var headerValue: String {
        switch self {
        case .unsigned: return "UNSIGNED-PAYLOAD"
        case .sha256(let hex): return hex
        }
    }
}

/// Signing fails only for a presign expiry outside what S3 accepts.
public enum SigV4Error: Error, Equatable, Sendable, CustomStringConvertible {
    case expiryOutOfRange(Int)

    public var description: String {
        switch self {
        case .expiryOutOfRange(let seconds):
            return "an expiry of \(seconds) s is out of range: presigned URLs last from 1 second to 7 days (604800 s)"
        }
    }
}

/// Signs requests with AWS Signature Version 4. A value: nothing inside reads the clock or the environment.
public struct Signer: Sendable {
    public let credentials: Credentials
    public let region: String
    public let service: String
    /// Whether paths are normalised and encoded twice (every service but S3).
    public let normalizePath: Bool
    private let keys = SigningKeyCache()

    static let algorithm = "AWS4-HMAC-SHA256"
    /// Headers that proxies change or that curl adds on its own: never signed.
    static let unsignedHeaders: Set<String> = ["authorization", "content-length", "expect", "user-agent", "transfer-encoding"]

    public init(credentials: Credentials, region: String, service: String = "s3", normalizePath: Bool? = nil) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizePath = normalizePath ?? (service != "s3")
    }

    /// Headers to add to the request: x-amz-date, x-amz-content-sha256 (S3), x-amz-security-token, Authorization.
    public func sign(_ request: SigningRequest, payload: PayloadHash, date: Date) -> [(name: String, value: String)] {
        let time = AMZDate(date)
        var added: [(name: String, value: String)] = [("x-amz-date", time.timestamp)]
        if service == "s3" { added.append(("x-amz-content-sha256", payload.headerValue)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        var signing = request
        signing.headers += added
        let canonical = canonicalRequest(signing, payload: payload)
        let scope = credentialScope(time)
        let toSign = stringToSign(canonicalRequest: canonical.text, timestamp: time.timestamp, scope: scope)
        let signature = self.signature(stringToSign: toSign, day: time.day)
        let authorization =
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
        return added + [("Authorization", authorization)]
    }

    /// The presigned (query) form: the request's query plus the X-Amz-* items, signature last.
    public func presign(
        _ request: SigningRequest, expires seconds: Int, date: Date, payload: PayloadHash = .unsigned
    ) throws(SigV4Error) -> [(name: String, value: String)] {
        guard (1...604_800).contains(seconds) else { throw .expiryOutOfRange(seconds) }
        let time = AMZDate(date)
        let scope = credentialScope(time)
        let signedHeaders = canonicalHeaders(request).signedHeaders
        var query = request.query
        query.append(("X-Amz-Algorithm", Self.algorithm))
        query.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"))
        query.append(("X-Amz-Date", time.timestamp))
        query.append(("X-Amz-Expires", String(seconds)))
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        query.append(("X-Amz-SignedHeaders", signedHeaders))
        var signing = request
        signing.query = query
        let canonical = canonicalRequest(signing, payload: payload)
        let toSign = stringToSign(canonicalRequest: canonical.text, timestamp: time.timestamp, scope: scope)
        query.append(("X-Amz-Signature", signature(stringToSign: toSign, day: time.day)))
        return query
    }

    // MARK: - Stages (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html)

    func credentialScope(_ time: AMZDate) -> String {
        "\(time.day)/\(region)/\(service)/aws4_request"
    }

    /// Stage 1: the canonical request, and the signed header list it names.
    func canonicalRequest(_ request: SigningRequest, payload: PayloadHash) -> (text: String, signedHeaders: String) {
        let headers = canonicalHeaders(request)
        let path = normalizePath ? URIEncoding.encodePath(URIEncoding.normalize(request.path), twice: true) : request.encodedPath
        let text = [
            request.method.uppercased(), path, request.encodedQuery, headers.block, headers.signedHeaders,
            payload.headerValue,
        ].joined(separator: "\n")
        return (text, headers.signedHeaders)
    }

    /// Lower-cased names, whitespace runs collapsed, repeated names joined by "," in order, sorted by name.
    func canonicalHeaders(_ request: SigningRequest) -> (block: String, signedHeaders: String) {
        var values: [String: [String]] = [:]
        var order: [String] = []
        let all = [("host", request.host)] + request.headers.filter { $0.name.lowercased() != "host" }
        for (name, value) in all {
            let lower = name.lowercased().trimmingCharacters(in: .whitespaces)
            guard !Self.unsignedHeaders.contains(lower) else { continue }
            if values[lower] == nil { order.append(lower) }
            values[lower, default: []].append(Self.collapseWhitespace(value))
        }
        let names = order.sorted()
        let block = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    static func collapseWhitespace(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
    }

    /// Stage 2: the string to sign.
    func stringToSign(canonicalRequest: String, timestamp: String, scope: String) -> String {
        [Self.algorithm, timestamp, scope, Digest.sha256Hex(Array(canonicalRequest.utf8))].joined(separator: "\n")
    }

    /// Stage 3: the signing key, derived once per day, region and service.
    func signingKey(day: String) -> [UInt8] {
        let cacheKey = "\(day)/\(region)/\(service)"
        if let key = keys.get(cacheKey, secret: credentials.secretAccessKey) { return key }
        var key = Digest.hmacSHA256(key: Array("AWS4\(credentials.secretAccessKey)".utf8), data: Array(day.utf8))
        for part in [region, service, "aws4_request"] {
            key = Digest.hmacSHA256(key: key, data: Array(part.utf8))
        }
        keys.set(cacheKey, secret: credentials.secretAccessKey, key: key)
        return key
    }

    /// Stage 4: the hex signature.
    func signature(stringToSign: String, day: String) -> String {
        hexString(Digest.hmacSHA256(key: signingKey(day: day), data: Array(stringToSign.utf8)))
    }
}

/// Derived signing keys, shared by copies of a signer; safe from any thread.
final class SigningKeyCache: Sendable {
    private let entries = Mutex<[String: (secret: String, key: [UInt8])]>([:])

    func get(_ name: String, secret: String) -> [UInt8]? {
        entries.withLock { entries in
            guard let entry = entries[name], entry.secret == secret else { return nil }
            return entry.key
        }
    }

    func set(_ name: String, secret: String, key: [UInt8]) {
        // A day's key is only useful for that day: keep the cache tiny.
        entries.withLock { entries in
            if entries.count > 8 { entries.removeAll() }
            entries[name] = (secret, key)
        }
    }
}

/// `20130524T000000Z` and `20130524` for a date, computed without a formatter (fast, thread-safe).
struct AMZDate {
    let timestamp: String
    let day: String

    init(_ date: Date) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        day = pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2)
        timestamp = day + "T" + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2) + "Z"
    }
}
