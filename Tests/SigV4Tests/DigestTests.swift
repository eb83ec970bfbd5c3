import Foundation
import Testing

@testable import SigV4

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Deterministic pseudo-random bytes (xorshift), so chunked and one-shot hashing see the same input.
private func noise(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

@Suite("Digests")
struct DigestTests {
    @Test("SHA-256 of \"abc\" and of nothing (FIPS 180-2)")
    func sha256Vectors() {
        #expect(Digest.sha256Hex(utf8("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256Hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(PayloadHash.empty == .sha256(hex: Digest.sha256Hex(Data())))
        #expect(Digest.sha256(utf8("abc")).count == 32)
    }

    @Test("SHA-256 of a million \"a\", fed in uneven pieces")
    func sha256MillionA() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var hasher = SHA256Hasher()
        var offset = 0
        var step = 1
        while offset < input.count {
            let end = min(offset + step, input.count)
            input[offset..<end].withUnsafeBytes { hasher.update($0) }
            offset = end
            step = step * 3 + 1
        }
        #expect(hexString(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("HMAC-SHA256, RFC 4231 test cases 1, 2 and 6")
    func hmacVectors() {
        #expect(
            hexString(Digest.hmacSHA256(key: [UInt8](repeating: 0x0B, count: 20), data: utf8("Hi There")))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hexString(Digest.hmacSHA256(key: utf8("Jefe"), data: utf8("what do ya want for nothing?")))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // A key longer than the block size is hashed first.
        #expect(
            hexString(
                Digest.hmacSHA256(
                    key: [UInt8](repeating: 0xAA, count: 131),
                    data: utf8("Test Using Larger Than Block-Size Key - Hash Key First")))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("HMAC-SHA256 with an empty key and empty data")
    func hmacEmpty() {
        #expect(
            hexString(Digest.hmacSHA256(key: [UInt8](), data: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("MD5 of nothing and of \"abc\" (RFC 1321)")
    func md5Vectors() {
        #expect(hexString(Digest.md5([UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(hexString(Digest.md5(utf8("abc"))) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(Data(Digest.md5([UInt8]())).base64EncodedString() == "1B2M2Y8AsgTpgAmY7PhCfg==")
    }

    @Test("incremental hashers equal one-shot hashing over any chunking", arguments: [1, 7, 64, 1000, 65_537, 300_000])
    func incrementalEqualsOneShot(chunk: Int) {
        let input = noise(count: 300_001)
        var sha = SHA256Hasher()
        var md5 = MD5Hasher()
        var offset = 0
        var round = 0
        while offset < input.count {
            let end = min(offset + chunk, input.count)
            // Alternate the three ways of feeding bytes.
            switch round % 3 {
            case 0: input[offset..<end].withUnsafeBytes { sha.update($0); md5.update($0) }
            case 1: sha.update(input[offset..<end]); md5.update(input[offset..<end])
            default: sha.update(Data(input[offset..<end])); md5.update(Data(input[offset..<end]))
            }
            offset = end
            round += 1
        }
        #expect(sha.finalize() == Digest.sha256(input))
        #expect(md5.finalize() == Digest.md5(input))
    }

    @Test("empty updates change nothing")
    func emptyUpdates() {
        var hasher = SHA256Hasher()
        hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
        hasher.update([UInt8]())
        hasher.update(utf8("abc"))
        hasher.update(Data())
        #expect(hexString(hasher.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("hashers work on any thread, many at once")
    func concurrentHashers() async {
        let input = noise(count: 100_000, seed: 42)
        let expected = Digest.sha256(input)
        let results = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var hasher = SHA256Hasher()
                    for start in stride(from: 0, to: input.count, by: 4096) {
                        hasher.update(input[start..<min(start + 4096, input.count)])
                    }
                    return hasher.finalize()
                }
            }
            return await group.reduce(into: [[UInt8]]()) { $0.append($1) }
        }
        #expect(results.count == 16)
        #expect(results.allSatisfy { $0 == expected })
    }

    @Test("hexString is lower-case, two digits per byte")
    func hex() {
        #expect(hexString([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        #expect(hexString([UInt8]()) == "")
    }
}
