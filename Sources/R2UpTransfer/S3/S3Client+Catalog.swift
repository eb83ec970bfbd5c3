public import Foundation
import SigV4
import R2UpModel

/// What a HEAD tells of an object, with its user metadata (RFC 2047 words decoded).
public struct ObjectDetails: Sendable, Equatable {
    public var size: Int64
    public var etag: String
    public var contentType: String?
    public var lastModified: Date?
    /// `x-amz-meta-NAME` by lower-case NAME.
    public var metadata: [String: String]
}

extension S3Client {
    /// HeadObject with the object's user metadata; nil when the object does not exist.
    public func headObjectDetails(bucket: String, key: String) async throws(S3ClientError) -> ObjectDetails? {
        let response: HTTPResponse
        do {
            response = try await send(Call(method: "HEAD", bucket: bucket, key: key))
        } catch .service(let failure) where failure.status == 404 && failure.code != "NoSuchBucket" {
            return nil
        }
        guard let length = response.header("content-length").flatMap({ HeaderNumber.parse($0) }) else {
            throw .unexpectedResponse("a HEAD of '\(key)' came back without a Content-Length")
        }
        var metadata: [String: String] = [:]
        for (name, value) in response.headers where name.hasPrefix("x-amz-meta-") {
            metadata[String(name.dropFirst("x-amz-meta-".count))] = TagMetadata.decode(value)
        }
        return ObjectDetails(
            size: length, etag: Self.etag(response), contentType: response.header("content-type"),
            lastModified: response.header("last-modified").flatMap(HTTPDate.parse), metadata: metadata)
    }

    /// PutObject of a small in-memory body, only if the object is still what was read:
    /// `If-Match: etag`, or `If-None-Match: *` when there was none. A 412 is `.service` with
    /// status 412 (someone else wrote it first).
    public func putObjectIfUnchanged(
        bucket: String, key: String, bytes: [UInt8], contentType: String, cacheControl: String?, expectedETag: String?
    ) async throws(S3ClientError) -> String {
        var headers = ObjectAttributes(contentType: contentType, cacheControl: cacheControl).headers
        if let expectedETag { headers.append(("If-Match", "\"\(expectedETag)\"")) } else { headers.append(("If-None-Match", "*")) }
        headers.append(("Content-MD5", Data(Digest.md5(bytes)).base64EncodedString()))
        let body = RequestBody.bytes(bytes)
        return Self.etag(try await send(Call(
            method: "PUT", bucket: bucket, key: key, headers: headers, body: body, payload: Self.payload(for: body))))
    }
}
