import Foundation
import SigV4

/// Temporary files with deterministic pseudo-random content.
public struct TestDirectory: ~Copyable, Sendable {
    public let path: String

    public init() throws {
        let base = FileManager.default.temporaryDirectory.path + "/r2up-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `size` bytes made from `seed` (a cheap xorshift stream, so no two sizes share a prefix by accident).
    @discardableResult
    public func makeFile(_ name: String, size: Int, seed: UInt64 = 1) throws -> (path: String, sha256: String) {
        let full = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: full, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: full))
        defer { try? handle.close() }
        // One pseudo-random MiB, its first 8 bytes stamped with the chunk number and seed:
        // every chunk differs, and writing 100 MiB stays fast in a debug build.
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for index in chunk.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            chunk[index] = UInt8(truncatingIfNeeded: state)
        }
        var hasher = SHA256Hasher()
        var remaining = size
        var number: UInt64 = 0
        while remaining > 0 {
            let count = min(remaining, chunk.count)
            withUnsafeBytes(of: number ^ seed) { stamp in
                for offset in 0..<8 { chunk[offset] = stamp[offset] }
            }
            number += 1
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            handle.write(Data(chunk[0..<count]))
            remaining -= count
        }
        return (full, hexString(hasher.finalize()))
    }
}
