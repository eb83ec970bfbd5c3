import Foundation
import SigV4
public import R2UpModel

/// A server-side copy's source: an object of the same bucket (a moved track's old key).
public struct CopySource: Sendable, Equatable {
    public var bucket: String
    public var key: String

    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// `x-amz-copy-source`: "/bucket/key", each byte but "/" percent-encoded (RFC 3986), so a
    /// key with spaces, "+", "?", "%" or non-ASCII names exactly that object and the header
    /// carries no control character.
    public var header: (name: String, value: String) {
        ("x-amz-copy-source", "/" + URIEncoding.encode(bucket) + "/" + URIEncoding.encodePath(key))
    }
}

/// Equal parts of a copy above the single-copy limit (UploadPartCopy): every part but the
/// last is `partSize` bytes, at most 10,000 parts, each between 5 MiB and 5 GiB.
public struct CopyPartPlan: Sendable, Equatable {
    public let size: Int64
    public let partSize: Int64

    public static let maxParts: Int64 = 10_000
    public static let minPartSize: Int64 = 5 << 20
    public static let maxPartSize: Int64 = 5 << 30

    /// - Parameter preferredPartSize: the part size to use when 10,000 parts of it cover `size`.
    public init(size: Int64, preferredPartSize: Int64) throws(UploadError) {
        guard size > 0 else { throw .invalidPartSize(size) }
        let (atLeast, overflow) = size.addingReportingOverflow(Self.maxParts - 1)
        guard !overflow else { throw .fileTooLarge(size) }
        // Whole MiB, so the ranges are easy to read in a trace.
        var part = max(Self.minPartSize, preferredPartSize, atLeast / Self.maxParts)
        part = (part + (1 << 20) - 1) / (1 << 20) * (1 << 20)
        guard part <= Self.maxPartSize else { throw .fileTooLarge(size) }
        self.size = size
        self.partSize = part
    }

    public var partCount: Int { Int((size + partSize - 1) / partSize) }

    /// The inclusive byte range of part `number` (1-based), as `x-amz-copy-source-range` says it.
    public func range(ofPart number: Int) -> ClosedRange<Int64> {
        let start = Int64(number - 1) * partSize
        return start...(min(start + partSize, size) - 1)
    }
}

extension S3Client {
    /// CopyObject inside the server: the object at `source` becomes `key`, with its metadata
    /// (directive COPY). A 200 whose body is an `<Error>` is a failure (S3 answers so when
    /// the copy fails after it began), and a `<CopyObjectResult>` without an ETag is not a
    /// copy r2up can check.
    /// - Returns: the new object's ETag.
    public func copyObject(
        bucket: String, key: String, source: CopySource, condition: WriteCondition? = nil
    ) async throws(S3ClientError) -> PutReply {
        var headers = [source.header]
        if let condition = condition?.header { headers.append(condition) }
        let response = try await send(Call(method: "PUT", bucket: bucket, key: key, headers: headers))
        return PutReply(etag: try Self.copyETag(response, root: "CopyObjectResult"), server: response.header("server"))
    }

    /// UploadPartCopy of a byte range of `source`; returns the part's ETag.
    public func uploadPartCopy(
        bucket: String, key: String, uploadID: String, partNumber: Int, source: CopySource, range: ClosedRange<Int64>
    ) async throws(S3ClientError) -> String {
        let response = try await send(Self.uploadPartCopyCall(
            bucket: bucket, key: key, uploadID: uploadID, partNumber: partNumber, source: source, range: range))
        return try Self.copyETag(response, root: "CopyPartResult")
    }

    /// The UploadPartCopy request (apart for its unit test: exact query and headers).
    static func uploadPartCopyCall(
        bucket: String, key: String, uploadID: String, partNumber: Int, source: CopySource, range: ClosedRange<Int64>
    ) -> Call {
        Call(
            method: "PUT", bucket: bucket, key: key,
            query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
            headers: [source.header, ("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound)")])
    }

    /// The ETag inside a copy's XML reply; moto names some roots ...Response.
    static func copyETag(_ response: HTTPResponse, root: String) throws(S3ClientError) -> String {
        let node: XMLNode
        do {
            node = try Self.document(response, root: root)
        } catch .unexpectedResponse(let message) {
            guard let other = XMLNode.parse(response.body), other.name == root.replacingOccurrences(of: "Result", with: "Response")
            else { throw .unexpectedResponse(message) }
            node = other
        }
        guard let etag = node.value("ETag").map(Self.unquote), !etag.isEmpty else {
            throw .unexpectedResponse("the copy answered <\(node.name)> without an ETag")
        }
        return etag
    }
}
