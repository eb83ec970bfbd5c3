import Foundation
import SigV4
import Testing

@testable import R2UpTransfer

/// What a pulled file is checked against (issue 28): a multipart ETag from part sizes, a
/// whole-object checksum; one flipped bit fails each.
@Suite("Object checks of pulled bytes")
struct ObjectCheckTests {
    /// A file of `bytes` and its open descriptor; closed and removed by `done`.
    static func file(_ bytes: [UInt8]) throws -> (descriptor: Int32, path: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        return (descriptor, path)
    }

    static func done(_ file: (descriptor: Int32, path: String)) {
        close(file.descriptor)
        unlink(file.path)
    }

    static let bytes: [UInt8] = (0..<250_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    @Test("a multipart ETag is the MD5 of the parts' MD5s; a flipped bit or another layout does not match")
    func partMD5s() throws {
        let parts: [Int64] = [100_000, 100_000, 50_000]
        var offset = 0
        var partETags: [String] = []
        for length in parts {
            partETags.append(hexString(Digest.md5(Self.bytes[offset..<offset + Int(length)])))
            offset += Int(length)
        }
        let etag = try #require(MultipartUpload.multipartETag(partETags))
        let good = try Self.file(Self.bytes)
        defer { Self.done(good) }
        #expect(ObjectCheck.partMD5s(etag: etag, parts: parts).matches(descriptor: good.descriptor, size: 250_000))
        #expect(!ObjectCheck.partMD5s(etag: etag, parts: [125_000, 125_000]).matches(descriptor: good.descriptor, size: 250_000))
        var damaged = Self.bytes
        damaged[180_000] ^= 0x10
        let bad = try Self.file(damaged)
        defer { Self.done(bad) }
        #expect(!ObjectCheck.partMD5s(etag: etag, parts: parts).matches(descriptor: bad.descriptor, size: 250_000))
    }

    @Test("a whole-object CRC-32C or CRC-32 the server keeps checks the bytes")
    func checksums() throws {
        let good = try Self.file(Self.bytes)
        defer { Self.done(good) }
        let local = try LocalFile(path: good.path)
        let crc32c = try local.crc32cBase64(offset: 0, length: 250_000)
        let crc32 = try local.crc32Base64(offset: 0, length: 250_000)
        #expect(ObjectCheck.checksum(.crc32c(crc32c)).matches(descriptor: good.descriptor, size: 250_000))
        #expect(ObjectCheck.checksum(.crc32(crc32)).matches(descriptor: good.descriptor, size: 250_000))
        #expect(!ObjectCheck.checksum(.crc32c(crc32)).matches(descriptor: good.descriptor, size: 250_000))
    }

    @Test(
        "multipart ETags parse; equal part layouts cover the size in exactly N parts",
        arguments: [
            ("0123456789abcdef0123456789ABCDEF-3", 3), ("0123456789abcdef0123456789abcdef", nil), ("x-3", nil),
            ("0123456789abcdef0123456789abcdef-0", nil), ("0123456789abcdef0123456789abcdef-10001", nil),
        ] as [(String, Int?)])
    func multipartETags(etag: String, count: Int?) {
        #expect(ObjectCheck.multipart(etag)?.count == count)
    }

    @Test("equal parts")
    func equalParts() {
        #expect(ObjectCheck.equalParts(size: 11 << 20, partSize: 5 << 20, count: 3) == [5 << 20, 5 << 20, 1 << 20])
        #expect(ObjectCheck.equalParts(size: 10 << 20, partSize: 5 << 20, count: 2) == [5 << 20, 5 << 20])
        #expect(ObjectCheck.equalParts(size: 11 << 20, partSize: 8 << 20, count: 3) == nil)
        #expect(ObjectCheck.equalParts(size: 11 << 20, partSize: 0, count: 3) == nil)
    }
}
