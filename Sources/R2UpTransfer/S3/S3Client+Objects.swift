public import Foundation
import SigV4
public import R2UpModel

/// Options for a new object.
public struct ObjectAttributes: Sendable, Equatable {
    public var contentType: String?
    public var cacheControl: String?
    /// User metadata, sent as `x-amz-meta-NAME`.
    public var metadata: [String: String] = [:]

    public init(contentType: String? = nil, cacheControl: String? = nil, metadata: [String: String] = [:]) {
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.metadata = metadata
    }

    /// Headers for the request; empty values are never sent (R2 answers 501 to them).
    var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        if let contentType, !contentType.isEmpty { headers.append(("Content-Type", contentType)) }
        if let cacheControl, !cacheControl.isEmpty { headers.append(("Cache-Control", cacheControl)) }
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) where !value.isEmpty {
            headers.append(("x-amz-meta-\(name.lowercased())", value))
        }
        return headers
    }
}

extension WriteCondition {
    /// The request header; nil for an ETag that is not a plain token (never sent as a header).
    var header: (name: String, value: String)? {
        switch self {
        case .absent:
            return ("If-None-Match", "*")
        case .etag(let etag):
            guard !etag.isEmpty, etag.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else { return nil }
            return ("If-Match", "\"\(etag)\"")
        }
    }
}

/// What a PutObject reply tells.
public struct PutReply: Sendable, Equatable {
    public var etag: String
    /// The `Server` header: which implementation answered (`ServerProfile.identify`).
    public var server: String?
    /// Not this request's reply: the object an earlier try stored, found at the key (its reply lost).
    public var adopted = false
}

/// What HEAD tells about an object.
public struct ObjectInfo: Sendable, Equatable {
    public var size: Int64
    public var etag: String
    public var contentType: String?
    public var lastModified: Date?
}

/// One entry of a listing.
public struct ObjectSummary: Sendable, Equatable {
    public var key: String
    public var size: Int64
    public var etag: String
    public var lastModified: Date?
}

/// One page of ListObjectsV2.
public struct ObjectListing: Sendable, Equatable {
    public var objects: [ObjectSummary]
    /// Folder-like prefixes when a delimiter was given.
    public var commonPrefixes: [String]
    /// Pass back to get the next page; nil on the last page.
    public var continuationToken: String?
}

extension S3Client {
    /// PutObject with the body's checksum, which the server verifies.
    public func putObject(
        bucket: String, key: String, body: RequestBody, checksum: PayloadChecksum?,
        attributes: ObjectAttributes = .init(), onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> String {
        try await putObjectReply(
            bucket: bucket, key: key, body: body, checksum: checksum, attributes: attributes, onProgress: onProgress
        ).etag
    }

    /// PutObject, answering with what the reply tells: the ETag and who answered (`Server`).
    /// `heldBy` holds the body until the gate decides (`BodyGate`).
    public func putObjectReply(
        bucket: String, key: String, body: RequestBody, checksum: PayloadChecksum?,
        attributes: ObjectAttributes = .init(), condition: WriteCondition? = nil,
        heldBy gate: BodyGate? = nil, onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> PutReply {
        var headers = attributes.headers
        if let checksum { headers.append(checksum.header) }
        if let condition = condition?.header { headers.append(condition) }
        var call = Call(
            method: "PUT", bucket: bucket, key: key, headers: headers, body: body,
            payload: Self.payload(for: body), onProgress: onProgress)
        call.heldBy = gate
        let response = try await send(call)
        return PutReply(etag: try Self.requiredETag(response), server: response.header("server"))
    }

    /// HeadObject; nil when the object does not exist.
    public func headObject(bucket: String, key: String) async throws(S3ClientError) -> ObjectInfo? {
        do throws(S3ClientError) {
            return try Self.objectInfo(try await send(Call(method: "HEAD", bucket: bucket, key: key)))
        } catch .service(let failure) where failure.status == 404 && failure.code != "NoSuchBucket" {
            return nil
        }
    }

    /// What a 2xx HEAD reply says. S3 always sends Content-Length and ETag; without them (a header
    /// block cut short, which libcurl accepts) the reply says nothing about the object: never
    /// read it as a 0-byte one. A retryable transfer error, as a broken connection is.
    static func objectInfo(_ response: HTTPResponse) throws(S3ClientError) -> ObjectInfo {
        guard let length = response.header("content-length").flatMap({ HeaderNumber.parse($0) }),
            !Self.etag(response).isEmpty
        else {
            throw .transfer(
                TransferError(kind: .connectionReset, message: "the HEAD reply came without Content-Length or ETag (cut short?)"))
        }
        return ObjectInfo(
            size: length, etag: Self.etag(response), contentType: response.header("content-type"),
            lastModified: response.header("last-modified").flatMap(HTTPDate.parse))
    }

    /// GetObject, whole or a byte range (`range` is inclusive, as in HTTP).
    public func getObject(
        bucket: String, key: String, range: ClosedRange<Int64>? = nil, sink: ResponseSink,
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        let response = try await send(Call(method: "GET", bucket: bucket, key: key, headers: headers, sink: sink, onProgress: onProgress))
        // A 206 must carry the range asked for: other bytes at this offset would corrupt the file.
        if let range, response.status == 206 {
            let sent = response.header("content-range") ?? ""
            guard ContentRange.matches(sent, range) else {
                throw .transfer(
                    TransferError(
                        kind: .connectionReset,
                        message: "the server sent Content-Range '\(sent.prefix(80))' for bytes \(range.lowerBound)-\(range.upperBound)"))
            }
        }
        return response
    }

    /// DeleteObject (S3 answers 204 whether or not the key existed).
    public func deleteObject(bucket: String, key: String) async throws(S3ClientError) {
        _ = try await send(Call(method: "DELETE", bucket: bucket, key: key))
    }

    /// ListObjectsV2, one page.
    public func listObjects(
        bucket: String, prefix: String = "", delimiter: String? = nil, continuationToken: String? = nil,
        maxKeys: Int = 1000
    ) async throws(S3ClientError) -> ObjectListing {
        // encoding-type=url, as the AWS CLI asks: XML 1.0 cannot carry control characters, and
        // SeaweedFS turned an ESC in a key into U+FFFD without it (then no GET could find the key).
        var query: [(name: String, value: String)] = [
            ("encoding-type", "url"), ("list-type", "2"), ("max-keys", String(maxKeys)),
        ]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        let response = try await send(Call(method: "GET", bucket: bucket, key: nil, query: query))
        return try Self.listing(response)
    }

    /// Reads a ListObjectsV2 page; an entry without a key or a size, or a page that says it is
    /// truncated but gives no token to go on with, is not a listing to act on.
    static func listing(_ response: HTTPResponse) throws(S3ClientError) -> ObjectListing {
        let root = try Self.document(response, root: "ListBucketResult")
        // Decoded only when the server says it encoded: one that ignores the parameter sends keys as they are.
        let encoded = root.value("EncodingType")?.lowercased() == "url"
        var objects: [ObjectSummary] = []
        for node in root.children("Contents") {
            guard let rawKey = node.value("Key"), !rawKey.isEmpty, let size = node.value("Size").flatMap({ Int64($0) }), size >= 0 else {
                throw .unexpectedResponse("a listing entry has no key or size")
            }
            objects.append(
                ObjectSummary(
                    key: try Self.listedName(rawKey, encoded: encoded), size: size, etag: Self.unquote(node.value("ETag") ?? ""),
                    lastModified: node.value("LastModified").flatMap(ISO8601.parse)))
        }
        var prefixes: [String] = []
        for node in root.children("CommonPrefixes") {
            if let prefix = node.value("Prefix") { prefixes.append(try Self.listedName(prefix, encoded: encoded)) }
        }
        guard root.value("IsTruncated") == "true" else {
            return ObjectListing(objects: objects, commonPrefixes: prefixes, continuationToken: nil)
        }
        guard let token = root.value("NextContinuationToken"), !token.isEmpty else {
            throw .unexpectedResponse("the listing says it is truncated but gives no continuation token")
        }
        return ObjectListing(objects: objects, commonPrefixes: prefixes, continuationToken: token)
    }

    /// Every page of ListObjectsV2 under `prefix`, in order. A token the server already gave
    /// (a loop) ends the listing with an error instead of following it forever.
    public func listAllObjects(
        bucket: String, prefix: String = "", delimiter: String? = nil
    ) async throws(S3ClientError) -> ObjectListing {
        var all = ObjectListing(objects: [], commonPrefixes: [], continuationToken: nil)
        var seen: Set<String> = []
        var token: String?
        repeat {
            let page = try await listObjects(bucket: bucket, prefix: prefix, delimiter: delimiter, continuationToken: token)
            all.objects += page.objects
            all.commonPrefixes += page.commonPrefixes
            token = page.continuationToken
            if let token, !seen.insert(token).inserted {
                throw .unexpectedResponse("the listing gave the same continuation token twice (a loop)")
            }
        } while token != nil
        return all
    }

    /// A key or prefix from a listing; with encoding-type=url, form-decoded ("+" is a space,
    /// a literal "+" comes as %2B: SeaweedFS writes "+", moto %20, botocore reads both so).
    static func listedName(_ text: String, encoded: Bool) throws(S3ClientError) -> String {
        guard encoded else { return text }
        guard let name = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
            throw .unexpectedResponse("a listed key is not URL-encoded as encoding-type=url promised: \(text.prefix(80))")
        }
        return name
    }

    /// The payload hash to sign: small in-memory bodies are hashed, file bodies are
    /// sent UNSIGNED-PAYLOAD and protected by Content-MD5 instead (one read of the file).
    static func payload(for body: RequestBody) -> PayloadHash {
        switch body {
        case .none: return .empty
        case .bytes(let bytes): return .sha256(hex: Digest.sha256Hex(bytes))
        case .file: return .unsigned
        }
    }
}

/// `Content-Range: bytes START-END/TOTAL` of a 206 reply (RFC 9110: the positions and the
/// length are digits, the length may be `*`).
enum ContentRange {
    static func matches(_ header: String, _ range: ClosedRange<Int64>) -> Bool {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes ") else { return false }
        let halves = text.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return false }
        let ends = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let start = HeaderNumber.parse(ends[0]), let end = HeaderNumber.parse(ends[1]) else {
            return false
        }
        if halves[1] != "*" {
            guard let total = HeaderNumber.parse(halves[1]), total > end else { return false }
        }
        return start == range.lowerBound && end == range.upperBound
    }
}

/// A number in a header (Content-Length, Content-Range): ASCII digits only. `Int64(_:)` alone
/// would also take a sign ("+4"), which no header number has.
enum HeaderNumber {
    static func parse(_ text: some StringProtocol) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text)
    }
}

/// Parses S3's ISO 8601 timestamps (`2026-11-22T10:00:00.000Z`).
enum ISO8601 {
    static func parse(_ text: String) -> Date? {
        let digits = text.split(whereSeparator: { "-T:.Z".contains($0) }).map { Int($0) }
        guard digits.count >= 6, let year = digits[0], let month = digits[1], let day = digits[2],
            let hour = digits[3], let minute = digits[4], let second = digits[5]
        else { return nil }
        return CivilTime.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }
}

extension S3Client {
    /// HeadBucket, for diagnosis only (object-scoped tokens cannot call it): nil when it succeeded.
    public func headBucketFailure(_ bucket: String) async -> S3ClientError? {
        do {
            _ = try await send(Call(method: "HEAD", bucket: bucket, key: nil))
            return nil
        } catch {
            if case .service(var failure) = error, failure.status == 404 {
                failure.code = "NoSuchBucket"
                return .service(failure)
            }
            return error
        }
    }
}

/// `--meta KEY=VALUE`: user metadata as S3 stores it (`x-amz-meta-KEY`). Keys are header
/// tokens (letters, digits, '-', '_'), stored lower-case; values printable ASCII, since
/// SigV4 signs header values as they are and S3 returns non-ASCII ones mangled.
public enum ObjectMetadata {
    public static func parse(_ pairs: [String]) -> Result<[String: String], ObjectMetadataError> {
        var metadata: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "=") else { return .failure(.notAPair(pair)) }
            let key = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            let isToken = !key.isEmpty && key.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard isToken else { return .failure(.badKey(pair)) }
            guard value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return .failure(.badValue(pair)) }
            // Header names ignore case: K=1 and k=2 are one key, and keeping either would lose the other.
            guard metadata[key.lowercased()] == nil else { return .failure(.duplicateKey(key.lowercased())) }
            metadata[key.lowercased()] = value
        }
        return .success(metadata)
    }
}

public enum ObjectMetadataError: Error, Equatable, CustomStringConvertible {
    case notAPair(String)
    case badKey(String)
    case badValue(String)
    case duplicateKey(String)

    public var description: String {
        switch self {
        case .notAPair(let pair): "\(OptionName.meta.option) '\(pair)' is not KEY=VALUE"
        case .badKey(let pair): "\(OptionName.meta.option) '\(pair)': a key may hold only letters, digits, '-' and '_'"
        case .badValue(let pair): "\(OptionName.meta.option) '\(pair)': a value must be printable ASCII (S3 sends metadata as HTTP headers)"
        case .duplicateKey(let key): "\(OptionName.meta.option) gives the key '\(key)' twice (keys ignore case); give each key once"
        }
    }
}
