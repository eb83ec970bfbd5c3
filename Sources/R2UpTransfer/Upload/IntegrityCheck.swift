import Foundation

/// How each PUT and part proves its bytes to the server, which rejects a damaged body
/// with BadDigest (DESIGN §6). All are verified by S3, MinIO and SeaweedFS; R2 has a
/// history of 501 NotImplemented for `x-amz-checksum-*` (PEERS §3 item 8), so MD5 is its default.
public enum IntegrityCheck: String, Sendable, CaseIterable {
    /// `Content-MD5`: portable everywhere; about 0.6–0.8 GB/s here.
    case md5
    /// `x-amz-checksum-crc32` (zlib): about 2.7–3.4 GB/s here.
    case crc32
    /// `x-amz-checksum-crc32c`: one SSE 4.2 instruction per 8 bytes, about 8 GB/s here.
    case crc32c

    /// The check for an endpoint when none is configured: MD5 for R2, CRC-32C elsewhere, and
    /// MD5 for a server known (`profile`, from a reply) to verify Content-MD5 but not CRC-32C:
    /// MinIO's gateway code as juicefs runs it stores a body whose CRC-32C is wrong.
    public static func defaultCheck(for endpoint: S3Endpoint, profile: ServerProfile? = nil) -> IntegrityCheck {
        if endpoint.isR2 { return .md5 }
        if let profile, !profile.verifiesCRC32C, profile.verifiesContentMD5 { return .md5 }
        return .crc32c
    }

    /// The checksum of a byte range of `file`, in this check's form.
    func checksum(of file: LocalFile, offset: Int64, length: Int64) throws(UploadError) -> PayloadChecksum {
        switch self {
        case .md5: return .md5(try file.md5Base64(offset: offset, length: length))
        case .crc32: return .crc32(try file.crc32Base64(offset: offset, length: length))
        case .crc32c: return .crc32c(try file.crc32cBase64(offset: offset, length: length))
        }
    }
}

/// A body's checksum as sent in a request header.
public enum PayloadChecksum: Sendable, Equatable {
    case md5(String)
    case crc32(String)
    case crc32c(String)

    /// Reads back a checksum written by `recorded`: a base64 MD5 is 24 characters, a CRC-32 8,
    /// a CRC-32C "c" and 8.
    public init?(recorded value: String) {
        switch value.count {
        case 24: self = .md5(value)
        case 8: self = .crc32(value)
        case 9 where value.hasPrefix("c"): self = .crc32c(String(value.dropFirst()))
        default: return nil
        }
    }

    /// The base64 value, as the header carries it.
    public var value: String {
        switch self {
        case .md5(let value), .crc32(let value), .crc32c(let value): value
        }
    }

    /// The value as stored with a part: it says which check it is.
    public var recorded: String {
        switch self {
        case .md5(let value), .crc32(let value): value
        case .crc32c(let value): "c" + value
        }
    }

    public var check: IntegrityCheck {
        switch self {
        case .md5: .md5
        case .crc32: .crc32
        case .crc32c: .crc32c
        }
    }

    var header: (name: String, value: String) {
        switch self {
        case .md5(let value): ("Content-MD5", value)
        case .crc32(let value): ("x-amz-checksum-crc32", value)
        case .crc32c(let value): ("x-amz-checksum-crc32c", value)
        }
    }
}

extension PayloadChecksum {
    /// A CRC as its header carries it: base64 of its four bytes, most significant first.
    static func base64(bigEndian value: UInt32) -> String {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
            .base64EncodedString()
    }
}
