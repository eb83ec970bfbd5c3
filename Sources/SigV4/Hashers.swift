import COpenSSL
public import Foundation

/// Incremental SHA-256: feed bytes as they are read, finish once.
///
/// Non-copyable, so one hasher has one owner and `finalize()` can only happen once. It can move to and be
/// used on any thread; it is not meant to be shared between threads at the same time.
public struct SHA256Hasher: ~Copyable, @unchecked Sendable {
    private var digest = EVPDigest(FetchedAlgorithm.sha256)

    /// Starts an empty SHA-256.
    public init() {}

    /// Adds `bytes` to the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Adds `bytes` (an array, `Data`, a slice...) to the hash.
    public mutating func update(_ bytes: some DataProtocol) { digest.update(bytes) }

    /// The 32-byte digest; empty only if OpenSSL failed.
    public consuming func finalize() -> [UInt8] { digest.finalize() }
}

/// Incremental MD5, for the Content-MD5 of a file or a part read in pieces.
///
/// Same ownership rules as `SHA256Hasher`.
public struct MD5Hasher: ~Copyable, @unchecked Sendable {
    private var digest = EVPDigest(FetchedAlgorithm.md5)

    /// Starts an empty MD5.
    public init() {}

    /// Adds `bytes` to the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Adds `bytes` (an array, `Data`, a slice...) to the hash.
    public mutating func update(_ bytes: some DataProtocol) { digest.update(bytes) }

    /// The 16-byte digest; empty only if OpenSSL failed (or a FIPS policy forbids MD5).
    public consuming func finalize() -> [UInt8] { digest.finalize() }
}

/// Digest algorithms fetched from OpenSSL's provider once per process. Given the legacy
/// `EVP_sha256()` handle, OpenSSL 3 searches the providers again (under a lock) on every
/// `EVP_DigestInit_ex`; a fetched one is used as it is. Immutable and thread-safe once made.
enum FetchedAlgorithm {
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()
    /// Falls back to the legacy handle when fetching fails (a FIPS policy): its init then fails, and the hasher returns [].
    nonisolated(unsafe) static let md5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil) ?? EVP_md5()
}

/// Owns one OpenSSL digest context. An OpenSSL failure is remembered and turns the result into `[]`
/// rather than a crash or a wrong digest.
struct EVPDigest: ~Copyable {
    private let context: OpaquePointer?
    private var failed: Bool

    init(_ algorithm: OpaquePointer?) {
        context = EVP_MD_CTX_new()
        failed = context == nil || EVP_DigestInit_ex(context, algorithm, nil) != 1
    }

    deinit { EVP_MD_CTX_free(context) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if EVP_DigestUpdate(context, base, bytes.count) != 1 { failed = true }
    }

    mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions {
            region.withUnsafeBytes { update($0) }
        }
    }

    consuming func finalize() -> [UInt8] {
        guard !failed else { return [] }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &output, &length) == 1 else { return [] }
        return Array(output.prefix(Int(length)))
    }
}
