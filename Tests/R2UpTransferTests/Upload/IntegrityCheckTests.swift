import Foundation
import Testing
import R2UpTestSupport
@testable import R2UpTransfer

/// The checksums requests carry, against values computed by Python's zlib and hashlib.
@Suite("Integrity checks")
struct IntegrityCheckTests {
    @Test("CRC-32, CRC-32C and MD5 of '123456789', whole and as a range")
    func knownValues() throws {
        let directory = try TestDirectory()
        let path = directory.path + "/check.txt"
        try Data("xx123456789yy".utf8).write(to: URL(fileURLWithPath: path))
        let file = try LocalFile(path: path)
        #expect(try IntegrityCheck.crc32.checksum(of: file, offset: 2, length: 9) == .crc32("y/Q5Jg=="))
        #expect(try IntegrityCheck.md5.checksum(of: file, offset: 2, length: 9) == .md5("JfnnlDI7RTiF9RgfG2JNCw=="))
        #expect(try file.crc32Base64(offset: 0, length: 0) == "AAAAAA==")
        // CRC-32C's published check value, 0xE3069283 (RFC 3720 B.4's polynomial).
        #expect(try IntegrityCheck.crc32c.checksum(of: file, offset: 2, length: 9) == .crc32c("4waSgw=="))
    }

    @Test("CRC-32C over a body longer than a word stride, with an odd tail (value from a bitwise reference)")
    func crc32cLong() throws {
        let directory = try TestDirectory()
        let path = directory.path + "/long.bin"
        var bytes: [UInt8] = []
        for _ in 0..<40 { bytes += (0...255).map { UInt8($0) } }
        bytes += Array("tail7".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try LocalFile(path: path)
        #expect(try file.crc32cBase64(offset: 0, length: Int64(bytes.count)) == "SjoiGQ==")
    }

    @Test("a recorded checksum is read back as the kind it was")
    func recordedKinds() {
        #expect(PayloadChecksum(recorded: "y/Q5Jg==")?.check == .crc32)
        #expect(PayloadChecksum(recorded: "JfnnlDI7RTiF9RgfG2JNCw==")?.check == .md5)
        #expect(PayloadChecksum(recorded: "c4waSgw==") == .crc32c("4waSgw=="))
        #expect(PayloadChecksum.crc32c("4waSgw==").recorded == "c4waSgw==")
        #expect(PayloadChecksum(recorded: "") == nil)
    }

    @Test("R2 endpoints default to Content-MD5, others to CRC-32C")
    func defaults() throws {
        let r2 = try S3Endpoint(url: "https://0123456789abcdef.r2.cloudflarestorage.com")
        let local = try S3Endpoint(url: "http://127.0.0.1:9000")
        #expect(IntegrityCheck.defaultCheck(for: r2) == .md5)
        #expect(IntegrityCheck.defaultCheck(for: local) == .crc32c)
    }

    @Test("a multipart ETag is the MD5 of the parts' binary MD5s, then -N")
    func multipartETag() {
        let parts = ["0cc175b9c0f1b6a831c399e269772661", "92eb5ffee6ae2fec3ad71c777531578f"]
        #expect(MultipartUpload.multipartETag(parts) == "96e024ba2074fe77e8e965ba43a704be-2")
        #expect(MultipartUpload.multipartETag(["not-hex"]) == nil)
    }
}
