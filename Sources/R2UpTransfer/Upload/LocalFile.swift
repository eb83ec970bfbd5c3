import CChecksum
import CZlib
public import Foundation
import SigV4
public import R2UpModel

/// An open regular file and its identity when opened; closed when released.
public final class LocalFile: Sendable {
    public let path: String
    public let descriptor: Int32
    public let size: Int64
    /// Modification time in nanoseconds since 1970, to tell a changed file.
    public let modificationTimeNs: Int64

    /// Opens a file for upload, refusing what is not a regular file.
    public init(path: String) throws(UploadError) {
        // O_NONBLOCK: opening a FIFO for reading would otherwise block until a writer came.
        // It changes nothing for a regular file's reads; fstat then refuses anything else.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(path) }
            // A socket cannot be opened at all (ENXIO): say what it is, as for a FIFO.
            var info = stat()
            if errno == ENXIO || errno == EOPNOTSUPP, stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
                throw .notARegularFile(path)
            }
            throw .fileUnreadable(path: path, reason: String(cString: strerror(errno)))
        }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .notARegularFile(path)
        }
        // /proc and /sys files do not hold the size they stat (0 bytes with data, 4096 with 23):
        // sent as they stat, they would be stored empty or never finish. The same for any file
        // that says 0 bytes and has data.
        var probe: UInt8 = 0
        if Self.kernelDevices.contains(UInt64(opened.st_dev)) || (opened.st_size == 0 && pread(descriptor, &probe, 1, 0) > 0) {
            close(descriptor)
            throw .fileUnreadable(path: path, reason: "its size is not what it holds (a /proc or /sys file?)")
        }
        self.path = path
        self.descriptor = descriptor
        size = Int64(opened.st_size)
        modificationTimeNs = Self.nanoseconds(opened)
        // Tell the kernel a big file is read front to back once (a small one is one read anyway).
        #if os(Linux)
        if size > 1 << 20 { _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_SEQUENTIAL)) }
        #endif
    }

    deinit { close(descriptor) }

    /// The devices of /proc and /sys: a file on one of them is the kernel's, whatever its name.
    private static let kernelDevices: Set<UInt64> = Set(["/proc", "/sys"].compactMap { path in
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_dev) : nil
    })

    /// Its size and mtime as opened.
    public var seen: SeenFile { SeenFile(size: size, mtimeNs: modificationTimeNs) }

    static func nanoseconds(_ info: stat) -> Int64 { info.mtimeNs }

    /// A file time in nanoseconds since 1970, clamped (`timespec.clampedNanoseconds`).
    public static func nanoseconds(_ time: timespec) -> Int64 { time.clampedNanoseconds }

    /// Why the file is not as it was opened: deleted (its path names nothing now), or changed.
    public var changeError: UploadError {
        var now = stat()
        return stat(path, &now) != 0 && errno == ENOENT ? .fileDeleted(path) : .fileChanged(path)
    }

    /// True when the path still names a file of the same size and modification time.
    public func isUnchanged() -> Bool {
        var now = stat()
        guard stat(path, &now) == 0 else { return false }
        return Int64(now.st_size) == size && Self.nanoseconds(now) == modificationTimeNs
    }

    /// Base64 MD5 of a byte range (the `Content-MD5` header).
    public func md5Base64(offset: Int64, length: Int64) throws(UploadError) -> String {
        var hasher = MD5Hasher()
        try readChunks(offset: offset, length: length) { hasher.update($0) }
        return Data(hasher.finalize()).base64EncodedString()
    }

    /// Base64 of the big-endian CRC-32 of a byte range (the `x-amz-checksum-crc32` header).
    public func crc32Base64(offset: Int64, length: Int64) throws(UploadError) -> String {
        var crc: UInt = 0
        try readChunks(offset: offset, length: length) { chunk in
            crc = crc32_z(crc, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count)
        }
        return PayloadChecksum.base64(bigEndian: UInt32(truncatingIfNeeded: crc))
    }

    /// Base64 of the big-endian CRC-32C of a byte range (the `x-amz-checksum-crc32c` header).
    public func crc32cBase64(offset: Int64, length: Int64) throws(UploadError) -> String {
        var crc: UInt32 = 0
        try readChunks(offset: offset, length: length) { chunk in
            crc = r2up_crc32c(crc, chunk.baseAddress, chunk.count)
        }
        return PayloadChecksum.base64(bigEndian: crc)
    }

    /// Feeds a byte range to `body` in 1 MiB pread steps (never the whole file in memory).
    private func readChunks(
        offset: Int64, length: Int64, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(UploadError) {
        let chunk = Int(max(1, min(Int64(1 << 20), length)))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(chunk), length - done))
            let got = pread(descriptor, buffer, want, off_t(offset + done))
            if got < 0 {
                if errno == EINTR { continue }
                throw .fileUnreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if got == 0 { throw .fileChanged(path) }
            body(UnsafeRawBufferPointer(start: buffer, count: got))
            done += Int64(got)
        }
    }
}
