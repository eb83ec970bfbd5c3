import COpenSSL
public import Foundation

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

    /// The HMAC-SHA256 of `data` under `key` (RFC 2104), from two SHA-256s of the fetched algorithm:
    /// OpenSSL 3's one-shot `HMAC()` fetches its MAC and digest on every call, which cost more than
    /// the hashing for the short strings SigV4 signs.
    public static func hmacSHA256(key: some DataProtocol, data: some DataProtocol) -> [UInt8] {
        let blockSize = 64
        var block = Array(key)
        if block.count > blockSize {
            block = sha256(block)
            guard !block.isEmpty else { return [] }
        }
        block.append(contentsOf: repeatElement(0, count: blockSize - block.count))
        var inner = SHA256Hasher()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(data)
        let innerDigest = inner.finalize()
        guard !innerDigest.isEmpty else { return [] }
        var outer = SHA256Hasher()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(innerDigest)
        return outer.finalize()
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
