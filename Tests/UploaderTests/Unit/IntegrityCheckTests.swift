import Foundation
import Testing

@testable import Uploader

/// The checksums requests carry, against values computed by Python's zlib and hashlib.
@Suite("Integrity checks")
struct IntegrityCheckTests {
    @Test("CRC-32 and MD5 of '123456789', whole and as a range")
    func knownValues() throws {
        let directory = try TestDirectory()
        let path = directory.path + "/check.txt"
        try Data("xx123456789yy".utf8).write(to: URL(fileURLWithPath: path))
        let file = try LocalFile(path: path)
        #expect(try IntegrityCheck.crc32.checksum(of: file, offset: 2, length: 9) == .crc32("y/Q5Jg=="))
        #expect(try IntegrityCheck.md5.checksum(of: file, offset: 2, length: 9) == .md5("JfnnlDI7RTiF9RgfG2JNCw=="))
        #expect(try file.crc32Base64(offset: 0, length: 0) == "AAAAAA==")
    }

    @Test("a recorded checksum is read back as the kind it was")
    func recordedKinds() {
        #expect(PayloadChecksum(recorded: "y/Q5Jg==")?.check == .crc32)
        #expect(PayloadChecksum(recorded: "JfnnlDI7RTiF9RgfG2JNCw==")?.check == .md5)
        #expect(PayloadChecksum(recorded: "") == nil)
    }

    @Test("R2 endpoints default to Content-MD5, others to CRC-32")
    func defaults() throws {
        let r2 = try S3Endpoint(url: "https://0123456789abcdef.r2.cloudflarestorage.com")
        let local = try S3Endpoint(url: "http://127.0.0.1:9000")
        #expect(IntegrityCheck.defaultCheck(for: r2) == .md5)
        #expect(IntegrityCheck.defaultCheck(for: local) == .crc32)
    }

    @Test("a multipart ETag is the MD5 of the parts' binary MD5s, then -N")
    func multipartETag() {
        let parts = ["0cc175b9c0f1b6a831c399e269772661", "92eb5ffee6ae2fec3ad71c777531578f"]
        #expect(MultipartUpload.multipartETag(parts) == "96e024ba2074fe77e8e965ba43a704be-2")
        #expect(MultipartUpload.multipartETag(["not-hex"]) == nil)
    }
}
