import COpenSSL
import Foundation

/// One-shot SHA-256, HMAC-SHA256 and MD5 from OpenSSL's libcrypto.
///
/// A result is empty only if OpenSSL itself failed (out of memory, or MD5 disabled by a FIPS policy); the
/// server then rejects the request instead of this process crashing.
public enum Digest {
    /// The SHA-256 of `bytes`.
    public static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lower-case hex SHA-256 of `bytes`, as `x-amz-content-sha256` wants it.
    public static func sha256Hex(_ bytes: some DataProtocol) -> String {
        hexString(sha256(bytes))
    }

    /// The HMAC-SHA256 of `data` under `key`.
    public static func hmacSHA256(key: some DataProtocol, data: some DataProtocol) -> [UInt8] {
        let keyBytes = Array(key)
        let dataBytes = Array(data)
        guard let keyLength = Int32(exactly: keyBytes.count) else { return [] }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // OpenSSL wants real pointers even for zero lengths: an empty array may not have one, so lend a byte.
        let keyStorage = keyBytes.isEmpty ? [0] : keyBytes
        let dataStorage = dataBytes.isEmpty ? [0] : dataBytes
        let result = keyStorage.withUnsafeBytes { keyBuffer in
            dataStorage.withUnsafeBufferPointer { dataBuffer in
                HMAC(
                    EVP_sha256(), keyBuffer.baseAddress, keyLength, dataBuffer.baseAddress, dataBytes.count,
                    &output, &length)
            }
        }
        guard result != nil else { return [] }
        return Array(output.prefix(Int(length)))
    }

    /// The MD5 of `bytes`, for Content-MD5.
    public static func md5(_ bytes: some DataProtocol) -> [UInt8] {
        var hasher = MD5Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// Lower-case hex of `bytes`.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        out.append(lowerHexDigits[Int(byte >> 4)])
        out.append(lowerHexDigits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}

private let lowerHexDigits: [UInt8] = Array("0123456789abcdef".utf8)
