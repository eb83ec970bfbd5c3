import Foundation
public import R2UpModel

/// What one S3 implementation checks, measured with `tools/s3facts.py` (README "Servers"):
/// which request checksums it verifies (a damaged body is refused with 400 BadDigest), and
/// whether it honours conditional writes. The upload default rests on it: a single PUT whose
/// checksum the server verifies is confirmed by its reply, without a HEAD.
public struct ServerProfile: Sendable, Equatable {
    public var name: String
    /// `Content-MD5` verified on PUT and UploadPart.
    public var verifiesContentMD5: Bool
    /// `x-amz-checksum-crc32` verified.
    public var verifiesCRC32: Bool
    /// `x-amz-checksum-crc32c` verified.
    public var verifiesCRC32C: Bool
    /// `If-None-Match: *` on PUT refuses to overwrite (412).
    public var conditionalIfNoneMatch: Bool
    /// `If-Match: ETAG` on PUT refuses when the object changed (412).
    public var conditionalIfMatch: Bool
    /// The same two headers honoured on CompleteMultipartUpload (412), measured apart: moto
    /// honours `If-None-Match` there and ignores `If-Match`.
    public var conditionalCompleteIfNoneMatch: Bool
    public var conditionalCompleteIfMatch: Bool
    /// A single PUT's ETag is always the hex MD5 of the stored bytes (not where server-side
    /// encryption may change it: S3's SSE-KMS and SSE-C, MinIO's encryption).
    public var singlePutETagIsMD5: Bool
    /// `If-None-Match: *` on CopyObject refuses to overwrite (412). Measured with boto3 on
    /// 2026-11-24: SeaweedFS 4.48 refuses, moto 5.2 copies over the object. Where false (or not
    /// measured), a HEAD checks the key before a copy (the copy still carries the header).
    public var conditionalCopyIfNoneMatch = false
    /// A multipart ETag ("hex-N") is the MD5 of the parts' MD5s, so `pull` can check the bytes
    /// with it once it knows the part sizes. Not on R2, whose multipart ETags are opaque (rclone's
    /// provider data says so too).
    public var multipartETagIsPartMD5s = true
    /// In a multipart upload created for CRC-32C, a part sent with no checksum header is answered
    /// with the CRC-32C the server computed, and a wrong one in CompleteMultipartUpload is refused
    /// (tools/s3facts.py, 2026-11-27: SeaweedFS 4.48 does both; moto and MinIO's gateway neither).
    /// Such a part is checksummed as it is sent and compared with the reply: the file is read once.
    public var echoesPartCRC32C = false

    /// Whether a CopyObject carrying `condition` is refused when it fails (r2up copies only to
    /// an empty key, or with `--overwrite` and no condition).
    public func honoursOnCopy(_ condition: WriteCondition) -> Bool {
        condition == .absent && conditionalCopyIfNoneMatch
    }

    /// Whether a write carrying `condition` is refused by this server when the condition fails.
    public func honours(_ condition: WriteCondition, multipart: Bool) -> Bool {
        switch (condition, multipart) {
        case (.absent, false): conditionalIfNoneMatch
        case (.etag, false): conditionalIfMatch
        case (.absent, true): conditionalCompleteIfNoneMatch
        case (.etag, true): conditionalCompleteIfMatch
        }
    }

    /// Whether a request carrying `check` is refused by this server when its body was damaged.
    public func verifies(_ check: IntegrityCheck) -> Bool {
        switch check {
        case .md5: verifiesContentMD5
        case .crc32: verifiesCRC32
        case .crc32c: verifiesCRC32C
        }
    }

    /// Cloudflare R2: Content-MD5 (its default here); `x-amz-checksum-*` has a history of 501 (PEERS §3).
    public static let r2 = ServerProfile(
        name: "Cloudflare R2", verifiesContentMD5: true, verifiesCRC32: false, verifiesCRC32C: false,
        conditionalIfNoneMatch: true, conditionalIfMatch: true, conditionalCompleteIfNoneMatch: true,
        conditionalCompleteIfMatch: true, singlePutETagIsMD5: true, multipartETagIsPartMD5s: false)
    /// Amazon S3 (documented: every checksum is verified; conditional writes since 2024).
    public static let amazonS3 = ServerProfile(
        name: "Amazon S3", verifiesContentMD5: true, verifiesCRC32: true, verifiesCRC32C: true,
        conditionalIfNoneMatch: true, conditionalIfMatch: true, conditionalCompleteIfNoneMatch: true,
        conditionalCompleteIfMatch: true, singlePutETagIsMD5: false)
    /// SeaweedFS 4.48, measured (scripts/seaweedfs.sh; conditional CompleteMultipartUpload
    /// with boto3 on 2026-11-24: both refused with 412, the old object kept).
    public static let seaweedFS = ServerProfile(
        name: "SeaweedFS", verifiesContentMD5: true, verifiesCRC32: true, verifiesCRC32C: true,
        conditionalIfNoneMatch: true, conditionalIfMatch: true, conditionalCompleteIfNoneMatch: true,
        conditionalCompleteIfMatch: true, singlePutETagIsMD5: true, conditionalCopyIfNoneMatch: true,
        echoesPartCRC32C: true)
    /// A server that says `Server: MinIO`: MinIO itself, or MinIO's gateway code as `juicefs
    /// gateway` runs it. Measured on juicefs 1.4.2's gateway (tools/s3facts.py, boto3;
    /// 2026-11-26): only Content-MD5 is verified (a wrong CRC-32 or CRC-32C is stored), and no
    /// conditional write is honoured (If-None-Match and If-Match on PUT, on the completion and
    /// on CopyObject are ignored; the copy-source conditions are). The two cannot be told apart
    /// by their replies, so what the gateway does is what r2up relies on: a HEAD checks the key
    /// first and every single PUT. Without `--keep-etag` its HEAD replies carry no ETag at all.
    public static let minIO = ServerProfile(
        name: "MinIO", verifiesContentMD5: true, verifiesCRC32: false, verifiesCRC32C: false,
        conditionalIfNoneMatch: false, conditionalIfMatch: false, conditionalCompleteIfNoneMatch: false,
        conditionalCompleteIfMatch: false, singlePutETagIsMD5: false)
    /// moto 5.2 (`moto_server`), measured: it stores a damaged body whatever checksum came with it,
    /// and completes a multipart upload over a wrong `If-Match` (2026-11-24).
    public static let moto = ServerProfile(
        name: "moto", verifiesContentMD5: false, verifiesCRC32: false, verifiesCRC32C: false,
        conditionalIfNoneMatch: true, conditionalIfMatch: true, conditionalCompleteIfNoneMatch: true,
        conditionalCompleteIfMatch: false, singlePutETagIsMD5: true)
    /// A server not recognised: nothing is assumed verified, so every single PUT gets its HEAD.
    public static let unknown = ServerProfile(
        name: "S3-compatible", verifiesContentMD5: false, verifiesCRC32: false, verifiesCRC32C: false,
        conditionalIfNoneMatch: false, conditionalIfMatch: false, conditionalCompleteIfNoneMatch: false,
        conditionalCompleteIfMatch: false, singlePutETagIsMD5: false)

    /// The profile for an endpoint, from its host and, failing that, the `Server` header of a reply.
    public static func identify(endpoint: S3Endpoint, serverHeader: String?) -> ServerProfile {
        if endpoint.isR2 { return .r2 }
        let host = endpoint.host.lowercased()
        if host == "amazonaws.com" || host.hasSuffix(".amazonaws.com") { return .amazonS3 }
        let server = (serverHeader ?? "").lowercased()
        if server.hasPrefix("seaweedfs") { return .seaweedFS }
        if server.hasPrefix("minio") { return .minIO }
        if server.hasPrefix("amazons3") { return .amazonS3 }
        // moto's server is a Werkzeug application and says so.
        if server.hasPrefix("werkzeug/") { return .moto }
        return .unknown
    }
}
