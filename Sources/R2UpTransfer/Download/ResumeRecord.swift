import CZlib
import R2UpModel
import Foundation

/// The sidecar kept next to a partial download: which object it is and which parts are on disk.
///
/// Each finished part carries the CRC-32 of its bytes as they were written, so a later run checks
/// them again instead of trusting the record; a record for another ETag, size or part size is dropped.
struct ResumeRecord: Codable, Equatable {
    var key: String
    var etag: String
    var size: Int64
    var partSize: Int64
    /// Part index → CRC-32 of the part's bytes in the temporary file.
    var parts: [Int: UInt32] = [:]

    func matches(_ item: PullItem, partSize: Int64) -> Bool {
        key == item.key && etag == item.etag && size == item.size && self.partSize == partSize
    }

    static func load(_ path: String) -> ResumeRecord? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    /// Writes a new copy and renames it over the old one: a kill never leaves half a record.
    func save(_ path: String) throws(DownloadError) {
        let temporary = path + ".tmp"
        do {
            let data = try JSONEncoder().encode(self)
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw .localFile(path: path, reason: "cannot write the resume record: \(DownloadPath.reason(error))")
        }
        guard rename(temporary, path) == 0 else {
            throw .localFile(path: path, reason: "cannot write the resume record: \(String(cString: strerror(errno)))")
        }
    }
}

/// One byte range of an object, fetched with one GET.
struct DownloadPart: Equatable {
    var index: Int
    var offset: Int64
    var length: Int64

    var range: ClosedRange<Int64> { offset...(offset + length - 1) }

    /// The parts of an object of `size` bytes: `partSize` each, the last one shorter.
    static func plan(size: Int64, partSize: Int64) -> [DownloadPart] {
        guard size > 0 else { return [] }
        let count = Int((size + partSize - 1) / partSize)
        return (0..<count).map { index in
            let offset = Int64(index) * partSize
            return DownloadPart(index: index, offset: offset, length: min(partSize, size - offset))
        }
    }
}

/// Reads a range of an open file in 1 MiB steps (never the whole file in memory).
enum FileRange {
    static func crc32(descriptor: Int32, offset: Int64, length: Int64) -> UInt32? {
        var crc: UInt = 0
        let ok = read(descriptor: descriptor, offset: offset, length: length) { chunk in
            crc = crc32_z(crc, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count)
        }
        return ok ? UInt32(truncatingIfNeeded: crc) : nil
    }

    /// Calls `body` with consecutive chunks; false when the file is shorter or unreadable.
    static func read(
        descriptor: Int32, offset: Int64, length: Int64, _ body: (UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(chunk), length - done))
            let got = pread(descriptor, buffer, want, off_t(offset + done))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return false }
            body(UnsafeRawBufferPointer(start: buffer, count: got))
            done += Int64(got)
        }
        return true
    }
}
