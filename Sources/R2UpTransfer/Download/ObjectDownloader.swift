import Foundation
import SigV4
import Synchronization
package import R2UpModel

/// Downloads one object into a hidden temporary file beside its final name, in ranged parts
/// fetched in parallel, and renames it into place only once its size and its bytes check out
/// against what the server says the object is (`ObjectCheck`).
package final class ObjectDownloader: Sendable {
    let client: S3Client
    let bucket: String
    package let slots: TransferSlots
    let partSize: Int64
    let retry = RequestRetryPolicy()
    static let maxAttempts = 5
    /// Whole downloads of one object whose bytes did not match it, before the pull fails.
    static let maxDownloads = 3

    package init(client: S3Client, bucket: String, slots: TransferSlots, partSize: Int64) {
        self.client = client
        self.bucket = bucket
        self.slots = slots
        self.partSize = partSize
    }

    /// `onBytes`: the bytes of the object on disk so far (resumed parts, then each part as it lands).
    /// `partSizeHint`: the part size of the upload r2up made of this object, if the store knows it.
    /// Bytes that do not match the object (damaged in transit) are never kept: the object is
    /// fetched again, whole, up to `maxDownloads` times in all.
    /// `beforeRename`: a last check of the complete, verified temporary file (given its descriptor),
    /// run before it takes its name; an error discards it (`fetch`: the track's content digest).
    package func download(
        _ item: PullItem, to path: String, partSizeHint: Int64? = nil, onBytes: (@Sendable (Int64) -> Void)? = nil,
        beforeRename: ((Int32) -> DownloadError?)? = nil
    ) async throws(DownloadError) -> DownloadOutcome {
        if try Self.isIdentical(path: path, item: item) {
            return DownloadOutcome(item: item, path: path, result: .skipped, resumedBytes: 0)
        }
        let check = await check(for: item, partSizeHint: partSizeHint)
        var downloads = 0
        while true {
            downloads += 1
            do throws(DownloadError) {
                var outcome = try await downloadOnce(item, to: path, check: check, onBytes: onBytes, beforeRename: beforeRename)
                if case .none(let reason) = check { outcome.unverified = reason }
                return outcome
            } catch .verificationFailed(let key, let reason) {
                if downloads < Self.maxDownloads { continue }
                throw .verificationFailed(key: key, reason: downloads > 1 ? "\(reason) (fetched \(downloads) times)" : reason)
            }
        }
    }

    private func downloadOnce(
        _ item: PullItem, to path: String, check: ObjectCheck, onBytes: (@Sendable (Int64) -> Void)?,
        beforeRename: ((Int32) -> DownloadError?)?
    ) async throws(DownloadError) -> DownloadOutcome {
        let (dataPath, recordPath) = DownloadPath.temporaryPaths(for: path)
        let parts = DownloadPart.plan(size: item.size, partSize: partSize)
        let resumable = parts.count > 1

        let (descriptor, record) = try openTemporary(
            item, path: path, dataPath: dataPath, recordPath: recordPath, parts: parts, resumable: resumable)
        defer { close(descriptor) }

        let missing = parts.filter { record.parts[$0.index] == nil }
        let resumedBytes = item.size - missing.reduce(0) { $0 + $1.length }
        try Self.checkFreeSpace(folder: (path as NSString).deletingLastPathComponent, needed: item.size - resumedBytes)
        if resumable { try record.save(recordPath) }

        let book = ResumeBook(record: record, path: resumable ? recordPath : nil)
        let landed = ByteCounter()
        landed.add(resumedBytes)
        onBytes?(resumedBytes)
        let failure = await fetch(missing, of: item, descriptor: descriptor, ranged: resumable, book: book) { bytes in
            landed.add(bytes)
            onBytes?(landed.value)
        }
        if let failure {
            // A changed object or damaged bytes cannot be resumed: start over next time.
            if case .objectChanged = failure { Self.discard(dataPath, recordPath) }
            if case .verificationFailed = failure { Self.discard(dataPath, recordPath) }
            if !resumable { Self.discard(dataPath, recordPath) }
            throw failure
        }
        try verify(item, check: check, descriptor: descriptor, dataPath: dataPath, recordPath: recordPath)
        if let failure = beforeRename?(descriptor) {
            Self.discard(dataPath, recordPath)
            throw failure
        }
        if let modified = item.lastModified {
            // Like aws s3 cp: the file's mtime is the object's, which the identical-file check compares.
            var times = [
                timespec(tv_sec: Int(Date().timeIntervalSince1970), tv_nsec: 0),
                timespec(tv_sec: Int(modified.timeIntervalSince1970), tv_nsec: 0),
            ]
            _ = futimens(descriptor, &times)
        }
        guard rename(dataPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            Self.discard(dataPath, recordPath)
            throw .localFile(path: path, reason: "cannot move the download into place: \(reason)")
        }
        unlink(recordPath)
        return DownloadOutcome(item: item, path: path, result: .downloaded, resumedBytes: resumedBytes)
    }

    // MARK: - Parts

    /// The temporary file, open: resumed where an earlier run's record still matches the
    /// object (each part whose bytes still have their CRC), else new and sized up front.
    private func openTemporary(
        _ item: PullItem, path: String, dataPath: String, recordPath: String, parts: [DownloadPart], resumable: Bool
    ) throws(DownloadError) -> (descriptor: Int32, record: ResumeRecord) {
        var record = ResumeRecord(key: item.key, etag: item.etag, size: item.size, partSize: partSize)
        var descriptor: Int32 = -1
        if resumable, let old = ResumeRecord.load(recordPath), old.matches(item, partSize: partSize) {
            descriptor = open(dataPath, O_RDWR | O_CLOEXEC)
            var info = stat()
            if descriptor >= 0, fstat(descriptor, &info) == 0, Int64(info.st_size) == item.size {
                // Verified, not trusted: a part counts only if its bytes still have the recorded CRC.
                for part in parts {
                    if let crc = old.parts[part.index],
                        FileRange.crc32(descriptor: descriptor, offset: part.offset, length: part.length) == crc
                    {
                        record.parts[part.index] = crc
                    }
                }
            } else if descriptor >= 0 {
                close(descriptor)
                descriptor = -1
            }
        }
        if descriptor < 0 {
            unlink(recordPath)
            descriptor = open(dataPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw .localFile(path: path, reason: "cannot create the temporary file: \(String(cString: strerror(errno)))")
            }
            // Sized up front, so a resumed run can tell a complete temporary file from a stub.
            guard ftruncate(descriptor, off_t(item.size)) == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(dataPath)
                throw .localFile(path: path, reason: "cannot size the temporary file: \(reason)")
            }
        }
        return (descriptor, record)
    }

    /// Fetches the parts with as many requests at once as the slots allow; the first failure stops the rest.
    private func fetch(
        _ parts: [DownloadPart], of item: PullItem, descriptor: Int32, ranged: Bool, book: ResumeBook,
        partLanded: @escaping @Sendable (Int64) -> Void
    ) async -> DownloadError? {
        await withTaskGroup(of: DownloadError?.self) { group in
            for part in parts {
                group.addTask {
                    await self.slots.acquire(bytes: part.length)
                    let start = self.slots.now()
                    let result =
                        Task.isCancelled
                        ? nil
                        : await self.fetch(
                            part, of: item, descriptor: descriptor, ranged: ranged, book: book)
                    if Task.isCancelled {
                        self.slots.release()
                    } else {
                        self.slots.release(
                            bytes: part.length, seconds: self.slots.now() - start, outcome: result?.depthOutcome ?? .completed)
                    }
                    if result == nil && !Task.isCancelled { partLanded(part.length) }
                    return result
                }
            }
            var first: DownloadError?
            for await result in group {
                if let result, first == nil {
                    first = result
                    group.cancelAll()
                }
            }
            return first
        }
    }

    private func fetch(
        _ part: DownloadPart, of item: PullItem, descriptor: Int32, ranged: Bool, book: ResumeBook
    ) async -> DownloadError? {
        var attempt = 0
        while true {
            attempt += 1
            let failure: DownloadError
            do {
                let response = try await client.getObject(
                    bucket: bucket, key: item.key, range: ranged ? part.range : nil,
                    sink: .file(descriptor: descriptor, offset: part.offset, limit: ranged ? part.length : nil))
                let etag = S3Client.etag(response)
                if !etag.isEmpty && etag != item.etag { return .objectChanged(key: item.key) }
                if ranged && response.status != 206 {
                    return .verificationFailed(key: item.key, reason: "the server ignored the byte range (HTTP \(response.status))")
                }
                if response.bodyBytesReceived == part.length {
                    guard let crc = FileRange.crc32(descriptor: descriptor, offset: part.offset, length: part.length) else {
                        return .localFile(path: item.relativePath, reason: "cannot read back the temporary file")
                    }
                    do { try book.finished(part.index, crc: crc) } catch { return error }
                    return nil
                }
                failure = .verificationFailed(
                    key: item.key, reason: "got \(response.bodyBytesReceived) bytes of a \(part.length)-byte range")
                if attempt >= Self.maxAttempts { return failure }
                continue
            } catch .service(let service) where service.status == 412 {
                return .objectChanged(key: item.key)
            } catch {
                if case .transfer(let transfer) = error, transfer.kind == .fileWriteFailed {
                    return .localFile(path: item.relativePath, reason: transfer.message)
                }
                failure = .s3(key: item.key, error)
                guard attempt < Self.maxAttempts, let delay = retry.delayBeforeRetry(error.failureKind, attempt: attempt) else {
                    return failure
                }
                if Task.isCancelled { return failure }
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// One request retried as a part's GET is: retryable failures (a reply cut short, 5xx, 429)
    /// with backoff, `maxAttempts` in all.
    package func retrying<T: Sendable>(_ operation: () async throws(S3ClientError) -> T) async throws(S3ClientError) -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await operation()
            } catch {
                guard attempt < Self.maxAttempts, !Task.isCancelled,
                    let delay = retry.delayBeforeRetry(error.failureKind, attempt: attempt)
                else { throw error }
                try? await Task.sleep(for: delay)
            }
        }
    }

    // MARK: - Checks

    private func verify(
        _ item: PullItem, check: ObjectCheck, descriptor: Int32, dataPath: String, recordPath: String
    ) throws(DownloadError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int64(info.st_size) == item.size else {
            Self.discard(dataPath, recordPath)
            throw .verificationFailed(key: item.key, reason: "the file is not \(item.size) bytes long")
        }
        guard check.matches(descriptor: descriptor, size: item.size) else {
            // Damaged in transit (or on disk since a resumed part was checked): nothing is kept.
            Self.discard(dataPath, recordPath)
            let against: String
            switch check {
            case .md5(let md5): against = "the MD5 of its bytes is not the ETag \(md5)"
            case .partMD5s(let etag, let parts): against = "the MD5 of its \(parts.count) parts' MD5s is not the ETag \(etag)"
            case .checksum(let checksum): against = "its \(checksum.check.rawValue.uppercased()) is not the server's \(checksum.value)"
            case .none: against = "unreadable"
            }
            throw .verificationFailed(key: item.key, reason: against)
        }
    }

    /// An identical file is already there: same size, and the same MD5 when the ETag is one,
    /// else (multipart or opaque ETags) an mtime no older than the object's, as aws s3 sync decides.
    package static func isIdentical(path: String, item: PullItem) throws(DownloadError) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .localFile(path: path, reason: "exists and is not a regular file; move it away first")
        }
        guard Int64(info.st_size) == item.size else { return false }
        if let md5 = item.plainMD5 {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            return md5Hex(descriptor: descriptor, length: item.size) == md5
        }
        guard let modified = item.lastModified else { return false }
        return Double(info.mtimeSeconds) >= modified.timeIntervalSince1970.rounded(.down)
    }

    package static func md5Hex(descriptor: Int32, length: Int64) -> String? {
        var hasher = MD5Hasher()
        let ok = FileRange.read(descriptor: descriptor, offset: 0, length: length) { hasher.update($0) }
        guard ok || length == 0 else { return nil }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func checkFreeSpace(folder: String, needed: Int64) throws(DownloadError) {
        var info = statvfs()
        guard needed > 0, statvfs(folder, &info) == 0 else { return }
        let available = Int64(info.f_bavail) * Int64(info.f_frsize)
        if available < needed { throw .notEnoughSpace(path: folder, needed: needed, available: available) }
    }

    static func discard(_ dataPath: String, _ recordPath: String) {
        unlink(dataPath)
        unlink(recordPath)
    }
}

/// The resume record shared by a download's part tasks; each finished part is saved at once.
final class ResumeBook: Sendable {
    private let record: Mutex<ResumeRecord>
    /// Where the record lives; nil for a one-part object, which has nothing to resume.
    let path: String?

    init(record: ResumeRecord, path: String?) {
        self.record = Mutex(record)
        self.path = path
    }

    func finished(_ index: Int, crc: UInt32) throws(DownloadError) {
        guard let path else { return }
        try record.withLock { (value: inout ResumeRecord) throws(DownloadError) in
            value.parts[index] = crc
            try value.save(path)
        }
    }
}
