public import Foundation
public import R2UpModel
import SigV4

/// A part the server holds for a multipart upload.
public struct UploadedPart: Sendable, Equatable {
    public var partNumber: Int
    public var etag: String
    public var size: Int64
    /// The checksum the part was sent with; CompleteMultipartUpload repeats a CRC
    /// (required when the upload was created with a CRC algorithm).
    public var checksum: PayloadChecksum?

    public init(partNumber: Int, etag: String, size: Int64, checksum: PayloadChecksum? = nil) {
        self.partNumber = partNumber
        self.etag = etag
        self.size = size
        self.checksum = checksum
    }
}

/// A multipart upload in progress on the server.
public struct PendingMultipartUpload: Sendable, Equatable {
    public var key: String
    public var uploadID: String
    public var initiated: Date?
}

extension S3Client {
    /// CreateMultipartUpload; returns the upload id. With a CRC check, every part must carry
    /// its `x-amz-checksum-crc32[c]` and the completion lists them.
    public func createMultipartUpload(
        bucket: String, key: String, attributes: ObjectAttributes = .init(), check: IntegrityCheck = .md5
    ) async throws(S3ClientError) -> String {
        var headers = attributes.headers
        switch check {
        case .md5: break
        case .crc32: headers.append(("x-amz-checksum-algorithm", "CRC32"))
        case .crc32c: headers.append(("x-amz-checksum-algorithm", "CRC32C"))
        }
        // A fresh connection: a reply lost on a reused one would make libcurl create a second
        // upload unseen, which no one aborts (FileUploader.createMultipartUpload aborts the ones it sees).
        var call = Call(method: "POST", bucket: bucket, key: key, query: [("uploads", "")], headers: headers)
        call.freshConnection = true
        let response = try await send(call)
        let root = try Self.document(response, root: "InitiateMultipartUploadResult")
        guard let uploadID = root.value("UploadId"), !uploadID.isEmpty else {
            throw .unexpectedResponse("CreateMultipartUpload returned no UploadId")
        }
        return uploadID
    }

    /// UploadPart with the body's checksum, which the server verifies; returns the part's ETag.
    public func uploadPart(
        bucket: String, key: String, uploadID: String, partNumber: Int, body: FileSlice, checksum: PayloadChecksum?,
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> String {
        var call = Self.partCall(bucket: bucket, key: key, uploadID: uploadID, partNumber: partNumber, body: body, onProgress: onProgress)
        if let checksum { call.headers.append(checksum.header) }
        return try Self.requiredETag(try await send(call))
    }

    private static func partCall(
        bucket: String, key: String, uploadID: String, partNumber: Int, body: FileSlice, onProgress: (@Sendable (Int64) -> Void)?
    ) -> Call {
        Call(
            method: "PUT", bucket: bucket, key: key, query: [("partNumber", String(partNumber)), ("uploadId", uploadID)],
            body: .file(body), payload: .unsigned, onProgress: onProgress)
    }

    /// UploadPart with no checksum header, to a server that answers with the CRC-32C it computed
    /// (`ServerProfile.echoesPartCRC32C`; the upload was created for CRC-32C). The CRC-32C of the
    /// bytes curl sent is computed as they go; another in the reply is BadDigest (the bytes
    /// changed on the way, and the part is sent again). Its checksum is nil when the reply has
    /// none: the part is unverified, and the caller sends it again with the checksum in a header.
    public func uploadPartChecksummedInFlight(
        bucket: String, key: String, uploadID: String, partNumber: Int, body: FileSlice,
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> (etag: String, checksum: PayloadChecksum?) {
        var call = Self.partCall(bucket: bucket, key: key, uploadID: uploadID, partNumber: partNumber, body: body, onProgress: onProgress)
        call.checksumsBody = true
        let response = try await send(call)
        let etag = try Self.requiredETag(response)
        guard let sent = response.bodyCRC32C else { throw .unexpectedResponse("curl did not read part \(partNumber) once through") }
        let computed = PayloadChecksum.base64(bigEndian: sent)
        guard let echoed = response.header("x-amz-checksum-crc32c") else { return (etag, nil) }
        guard echoed == computed else {
            throw .service(S3ServiceError(
                status: 400, code: "BadDigest",
                message: "part \(partNumber) arrived damaged: the CRC-32C in the reply is not that of the bytes sent"))
        }
        return (etag, .crc32c(computed))
    }

    /// CompleteMultipartUpload with the parts in order; returns the object's ETag.
    public func completeMultipartUpload(
        bucket: String, key: String, uploadID: String, parts: [UploadedPart], condition: WriteCondition? = nil
    ) async throws(S3ClientError) -> String {
        var xml = "<CompleteMultipartUpload>"
        for part in parts.sorted(by: { $0.partNumber < $1.partNumber }) {
            xml += "<Part><PartNumber>\(part.partNumber)</PartNumber><ETag>\"\(part.etag.xmlEscaped)\"</ETag>"
            switch part.checksum {
            case .crc32(let crc): xml += "<ChecksumCRC32>\(crc.xmlEscaped)</ChecksumCRC32>"
            case .crc32c(let crc): xml += "<ChecksumCRC32C>\(crc.xmlEscaped)</ChecksumCRC32C>"
            case .md5, nil: break
            }
            xml += "</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let body = RequestBody.bytes(Array(xml.utf8))
        let response = try await send(
            Call(
                method: "POST", bucket: bucket, key: key, query: [("uploadId", uploadID)],
                headers: [("Content-Type", "application/xml")] + (condition?.header.map { [$0] } ?? []), body: body,
                payload: Self.payload(for: body)))
        // moto names the root CompleteMultipartUploadResponse (S3: ...Result); the ETag inside is what counts.
        let root: XMLNode
        do {
            root = try Self.document(response, root: "CompleteMultipartUploadResult")
        } catch .unexpectedResponse {
            root = try Self.document(response, root: "CompleteMultipartUploadResponse")
        }
        guard let etag = root.value("ETag").map(Self.unquote), !etag.isEmpty else {
            throw .unexpectedResponse("CompleteMultipartUpload answered without an ETag")
        }
        return etag
    }

    /// AbortMultipartUpload (free on R2). A missing upload counts as aborted.
    public func abortMultipartUpload(bucket: String, key: String, uploadID: String) async throws(S3ClientError) {
        do {
            _ = try await send(Call(method: "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)]))
        } catch .service(let failure) where failure.code == "NoSuchUpload" {
            return
        }
    }

    /// ListParts, all pages.
    public func listParts(bucket: String, key: String, uploadID: String) async throws(S3ClientError) -> [UploadedPart] {
        var parts: [UploadedPart] = []
        var marker: String?
        var seen: Set<String> = []
        repeat {
            var query: [(name: String, value: String)] = [("uploadId", uploadID)]
            if let marker { query.append(("part-number-marker", marker)) }
            let response = try await send(Call(method: "GET", bucket: bucket, key: key, query: query))
            let root = try Self.document(response, root: "ListPartsResult")
            for node in root.children("Part") {
                guard let number = Int(node.value("PartNumber") ?? ""), let etag = node.value("ETag").map(Self.unquote),
                    !etag.isEmpty, let size = Int64(node.value("Size") ?? ""), size >= 0
                else { throw .unexpectedResponse("a ListParts entry has no part number, ETag or size") }
                parts.append(UploadedPart(partNumber: number, etag: etag, size: size))
            }
            let next = root.value("NextPartNumberMarker")
            marker = root.value("IsTruncated") == "true" ? next : nil
            if let marker, !seen.insert(marker).inserted {
                throw .unexpectedResponse("ListParts gave the same part-number marker twice (a loop)")
            }
        } while marker != nil
        return parts
    }

    /// ListMultipartUploads under a prefix, all pages.
    public func listMultipartUploads(bucket: String, prefix: String = "") async throws(S3ClientError) -> [PendingMultipartUpload] {
        var uploads: [PendingMultipartUpload] = []
        var keyMarker: String?
        var uploadMarker: String?
        repeat {
            var query: [(name: String, value: String)] = [("uploads", "")]
            if !prefix.isEmpty { query.append(("prefix", prefix)) }
            if let keyMarker { query.append(("key-marker", keyMarker)) }
            if let uploadMarker { query.append(("upload-id-marker", uploadMarker)) }
            let response = try await send(Call(method: "GET", bucket: bucket, key: nil, query: query))
            let root = try Self.document(response, root: "ListMultipartUploadsResult")
            for node in root.children("Upload") {
                uploads.append(
                    PendingMultipartUpload(
                        key: node.value("Key") ?? "", uploadID: node.value("UploadId") ?? "",
                        initiated: node.value("Initiated").flatMap(ISO8601.parse)))
            }
            if root.value("IsTruncated") == "true", let nextKey = root.value("NextKeyMarker"), nextKey != keyMarker {
                keyMarker = nextKey
                uploadMarker = root.value("NextUploadIdMarker")
            } else {
                keyMarker = nil
            }
        } while keyMarker != nil
        return uploads
    }
}
