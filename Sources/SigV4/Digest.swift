import COpenSSL

/// SHA-256, HMAC-SHA256 and MD5 from OpenSSL's libcrypto.
public enum Digest {
    /// Hex SHA-256 of bytes.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        var hasher = SHA256Hasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hexString(hasher.finalize())
    }

    /// HMAC-SHA256 of `data` under `key`.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBuffer in
            data.withUnsafeBufferPointer { dataBuffer in
                _ = HMAC(
                    EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count), dataBuffer.baseAddress,
                    dataBuffer.count, &output, &length)
            }
        }
        return Array(output.prefix(Int(length)))
    }

    /// MD5 of bytes.
    public static func md5(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = MD5Hasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}

/// An incremental digest over an OpenSSL EVP context.
final class EVPContext {
    let context: OpaquePointer?

    init(_ algorithm: OpaquePointer?) {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, algorithm, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func finalize() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }
}

/// Incremental SHA-256: feed bytes as they are read, finish once.
public struct SHA256Hasher {
    private let context = EVPContext(EVP_sha256())
    public init() {}
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { context.update(bytes) }
    public mutating func finalize() -> [UInt8] { context.finalize() }
}

/// Incremental MD5, for Content-MD5.
public struct MD5Hasher {
    private let context = EVPContext(EVP_md5())
    public init() {}
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { context.update(bytes) }
    public mutating func finalize() -> [UInt8] { context.finalize() }
}

/// Lower-case hex of bytes.
public func hexString(_ bytes: [UInt8]) -> String {
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}
