import Foundation
import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// What `pull` found for a name: the objects to fetch and the keys refused before any byte moved.
package struct PullPlan: Sendable, Equatable {
    package var items: [PullItem]
    package var refused: [DownloadError]
}

/// One step of a pull, for progress lines.
package enum PullEvent: Sendable {
    case finished(DownloadOutcome)
    case failed(key: String, DownloadError)
}

/// A finished pull.
package struct PullSummary: Sendable {
    package var outcomes: [DownloadOutcome] = []
    package var failures: [(key: String, error: DownloadError)] = []
    /// Whether the run was cancelled (Ctrl-C, SIGTERM).
    package var interrupted = false
    /// Objects not pulled because the run was interrupted; the same pull resumes them (a large
    /// one from the parts verified on disk).
    package var leftResumable = 0

    /// The line `pull` ends with on stderr: "Pulled 2 files (16 MB); 1 identical skipped; 1 failed."
    /// - Parameter refused: files refused before any download (counted as failed).
    package func line(refused: Int) -> String {
        let downloaded = outcomes.filter { $0.result == .downloaded }
        let bytes = downloaded.reduce(Int64(0)) { $0 + $1.item.size }
        var line = "Pulled \(downloaded.count) \(downloaded.count == 1 ? "file" : "files") (\(ByteCount.string(bytes)))"
        let resumed = downloaded.reduce(Int64(0)) { $0 + $1.resumedBytes }
        if resumed > 0 { line += ", \(ByteCount.string(resumed)) of it resumed from disk" }
        let skipped = outcomes.count - downloaded.count
        if skipped > 0 { line += "; \(skipped) identical skipped" }
        let failed = failures.count + refused
        if failed > 0 { line += "; \(failed) failed" }
        return line + "."
    }
}

/// The download side of r2up (seed 000's symmetry, seed 004's audio on demand): lists a key
/// or a folder of keys and brings each object into a destination folder, recording each
/// track's download state in the store.
package final class Puller: Sendable {
    package static let defaultPartSize: Int64 = 8 << 20

    package let service: UploadService
    let store: Store?
    let downloader: ObjectDownloader
    /// Objects fetched at once: the depth, read as it moves (one object per slot at most).
    var concurrency: Int { downloader.slots.limit }
    /// The requests the run kept in flight, and why.
    package var depthReport: DepthReport { downloader.slots.depthReport }
    /// Replace a local file even when it changed since r2up last moved it (`pull --overwrite`).
    let overwrite: Bool

    package init(service: UploadService, store: Store?, partSize: Int64 = Puller.defaultPartSize, overwrite: Bool = false) {
        self.service = service
        self.store = store
        self.overwrite = overwrite
        let slots = service.options.makeSlots(tuning: service.tuning, overTLS: service.endpoint.usesTLS)
        downloader = ObjectDownloader(client: service.client, bucket: service.bucket, slots: slots, partSize: partSize)
    }

    /// The objects `target` names: everything under it when it ends in `/` (or is empty), else the
    /// object of that key, else the folder `target/`. Keys that cannot land safely are refused here.
    package func plan(_ target: String) async throws(DownloadError) -> PullPlan {
        if !target.isEmpty && !target.hasSuffix("/") {
            let info: ObjectInfo?
            do {
                info = try await downloader.retrying { () throws(S3ClientError) -> ObjectInfo? in
                    try await service.client.headObject(bucket: service.bucket, key: target)
                }
            } catch {
                throw .s3(key: target, error)
            }
            if let info {
                do {
                    let relative = try DownloadPath.relativePath(key: target, prefix: nil)
                    return PullPlan(
                        items: [PullItem(key: target, size: info.size, etag: info.etag, lastModified: info.lastModified, relativePath: relative)],
                        refused: [])
                } catch {
                    return PullPlan(items: [], refused: [error])
                }
            }
        }
        let prefix = target.isEmpty || target.hasSuffix("/") ? target : target + "/"
        var plan = PullPlan(items: [], refused: [])
        let listing: ObjectListing
        do {
            listing = try await downloader.retrying { () throws(S3ClientError) -> ObjectListing in
                try await service.client.listAllObjects(bucket: service.bucket, prefix: prefix)
            }
        } catch {
            throw .s3(key: prefix, error)
        }
        do {
            for object in listing.objects {
                // A zero-byte "folder/" marker is not a file.
                if object.key.hasSuffix("/") && object.size == 0 { continue }
                do {
                    let relative = try DownloadPath.relativePath(key: object.key, prefix: prefix)
                    plan.items.append(
                        PullItem(key: object.key, size: object.size, etag: object.etag, lastModified: object.lastModified, relativePath: relative))
                } catch {
                    plan.refused.append(error)
                }
            }
        }
        if plan.items.isEmpty && plan.refused.isEmpty { throw .notFound(target: target, bucket: service.bucket) }
        return plan
    }

    /// The destination as an absolute folder, created when missing.
    package static func prepareDestination(_ destination: String) throws(DownloadError) -> String {
        let path = URL(fileURLWithPath: destination).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .badDestination(path: path, reason: "is not a folder; give a folder to pull into") }
            return path
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .badDestination(path: path, reason: "cannot create the folder: \(DownloadPath.reason(error))")
        }
        return path
    }

    /// Refuses a pull none of whose items can land (one line for the folder, not one per file):
    /// none is on disk yet (a copy there may be identical: skipped, nothing written), and the
    /// folder each goes to, or the nearest one that exists, cannot be written.
    package static func checkWritable(_ items: [PullItem], in destination: String) throws(DownloadError) {
        var blocked: (folder: String, reason: String)?
        for item in items {
            let path = destination + "/" + item.relativePath
            if FileManager.default.fileExists(atPath: path) { return }
            var folder = (path as NSString).deletingLastPathComponent
            while !folder.isEmpty, folder != "/", !FileManager.default.fileExists(atPath: folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
            if access(folder, W_OK) == 0 { return }
            blocked = blocked ?? (folder, String(cString: strerror(errno)))
        }
        if let blocked {
            throw .badDestination(path: blocked.folder, reason: "cannot write in the folder: \(blocked.reason); give a folder you can write to")
        }
    }

    /// Pulls every item into `destination` (an absolute folder), several objects at once.
    /// `progress`, when a display draws it, counts the objects and their bytes as they land.
    package func run(
        _ items: [PullItem], destination: String, progress: TransferProgress? = nil,
        onEvent: @escaping @Sendable (PullEvent) -> Void = { _ in }
    ) async -> PullSummary {
        progress?.expect(files: items.count, bytes: items.reduce(0) { $0 + $1.size })
        return await withTaskGroup(of: (String, Result<DownloadOutcome, DownloadError>).self) { group in
            var summary = PullSummary()
            var next = 0
            func collect(_ result: (String, Result<DownloadOutcome, DownloadError>)) {
                switch result.1 {
                case .success(let outcome):
                    summary.outcomes.append(outcome)
                    onEvent(.finished(outcome))
                case .failure(let error) where error.isCancellation || Task.isCancelled:
                    // Ctrl-C: not a failure; the same pull resumes it.
                    summary.leftResumable += 1
                case .failure(let error):
                    summary.failures.append((result.0, error))
                    onEvent(.failed(key: result.0, error))
                }
            }
            while next < items.count || !group.isEmpty {
                let done = summary.outcomes.count + summary.failures.count + summary.leftResumable
                while !Task.isCancelled && next < items.count && next - done < concurrency {
                    let item = items[next]
                    next += 1
                    group.addTask { (item.key, await self.pull(item, into: destination, progress: progress)) }
                }
                guard let result = await group.next() else { break }
                collect(result)
            }
            if Task.isCancelled {
                summary.interrupted = true
                summary.leftResumable += items.count - next
            }
            return summary
        }
    }

    /// Pulls a track whose download failed again, into the same file (`r2up retry`).
    package func retry(_ track: TrackRecord) async -> Result<DownloadOutcome, DownloadError> {
        guard let key = track.key else { return .failure(.notFound(target: track.path, bucket: service.bucket)) }
        let cloud = CloudCopy(bucket: service.bucket, key: key, etag: track.etag)
        let failure: DownloadError
        do {
            if let info = try await service.client.headObject(bucket: service.bucket, key: key) {
                let item = PullItem(
                    key: key, size: info.size, etag: info.etag, lastModified: info.lastModified,
                    relativePath: (track.path as NSString).lastPathComponent)
                return await pull(item, into: (track.path as NSString).deletingLastPathComponent)
            }
            failure = .notFound(target: key, bucket: service.bucket)
        } catch {
            failure = .s3(key: key, error)
        }
        _ = try? store?.failDownload(path: track.path, reason: failure.diagnosis.message, cloud: cloud)
        return .failure(failure)
    }

    /// Pulls one object and records its download state (a store failure does not stop the download).
    package func pull(
        _ item: PullItem, into destination: String, progress: TransferProgress? = nil
    ) async -> Result<DownloadOutcome, DownloadError> {
        let cloud = CloudCopy(bucket: service.bucket, key: item.key, etag: item.etag)
        let path: String
        let id = UUID()
        progress?.started(id: id, name: FilePath.name(item.key), size: item.size)
        do { path = try DownloadPath.prepareFolder(for: item.relativePath, in: destination) } catch {
            progress?.finished(id: id, size: item.size, succeeded: false)
            return .failure(error)
        }
        if let refusal = refusal(toReplace: path, with: item) {
            progress?.finished(id: id, size: item.size, succeeded: false)
            return .failure(refusal)
        }
        _ = try? store?.beginDownload(path: path, size: item.size, cloud: cloud)
        let result = await download(item, to: path, cloud: cloud, progress: progress.map { progress in
            { @Sendable bytes in progress.sent(id, bytes: bytes) }
        })
        if case .success = result {
            progress?.finished(id: id, size: item.size, succeeded: true)
        } else {
            progress?.finished(id: id, size: item.size, succeeded: false)
        }
        return result
    }

    private func download(
        _ item: PullItem, to path: String, cloud: CloudCopy, progress: (@Sendable (Int64) -> Void)?
    ) async -> Result<DownloadOutcome, DownloadError> {
        do {
            // Only a multipart ETag needs the part size; a store that cannot say leaves it to the server.
            let hint = ObjectCheck.multipart(item.etag) == nil
                ? nil : (try? store?.uploadPartSize(bucket: service.bucket, key: item.key, etag: item.etag)) ?? nil
            let outcome = try await downloader.download(item, to: path, partSizeHint: hint, onBytes: progress)
            var info = stat()
            if stat(path, &info) == 0 {
                let mtime = info.mtimeNs
                _ = try? store?.finishDownload(path: path, size: Int64(info.st_size), mtimeNs: mtime, cloud: cloud)
            }
            return .success(outcome)
        } catch {
            let reason = error.isCancellation || Task.isCancelled ? "interrupted; the same pull resumes it" : error.diagnosis.message
            _ = try? store?.failDownload(path: path, reason: reason, cloud: cloud)
            return .failure(error)
        }
    }

    /// Pulls one object to `descriptor` (stdout for `pull KEY -` and `cat`): fetched and verified
    /// into a temporary file first, so only bytes that match the object are written, then copied
    /// out a block at a time. No track is recorded: no file of the user's holds the copy.
    package func stream(_ item: PullItem, to descriptor: Int32, progress: TransferProgress? = nil) async throws(DownloadError) {
        let folder = FileManager.default.temporaryDirectory.path + "/r2up-cat-\(UUID().uuidString)"
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw .localFile(path: folder, reason: "cannot create a temporary folder: \(DownloadPath.reason(error))")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/object"
        let id = UUID()
        progress?.expect(files: 1, bytes: item.size)
        progress?.started(id: id, name: FilePath.name(item.key), size: item.size)
        _ = try await downloader.download(item, to: path, onBytes: progress.map { progress in
            { @Sendable bytes in progress.sent(id, bytes: bytes) }
        })
        progress?.finished(id: id, size: item.size, succeeded: true)
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw .localFile(path: path, reason: String(cString: strerror(errno))) }
        defer { close(source) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count == 0 { return }
            guard count > 0 else { throw .localFile(path: path, reason: String(cString: strerror(errno))) }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + written }, count - written) }
                guard step > 0 else { throw .localFile(path: "standard output", reason: String(cString: strerror(errno))) }
                written += step
            }
        }
    }

    /// Why the file at `path` must not be replaced by `item`, or nil. A file may be replaced when
    /// there is none, when it is the object already (the download skips it), or when it is the
    /// copy r2up last uploaded or downloaded there: the track's size and mtime, or, touched
    /// since, the same bytes as the track's MD5 ETag. Anything else is the user's edit (or a
    /// file r2up never wrote), kept unless `--overwrite`.
    func refusal(toReplace path: String, with item: PullItem) -> DownloadError? {
        guard !overwrite else { return nil }
        var info = stat()
        // No file, or no regular file (the download says what is wrong with that).
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int64(info.st_size)
        let mtime = info.mtimeNs
        let track = try? store?.track(path: path)
        if let track, track.isInCloud, track.size == size, track.mtimeNs == mtime { return nil }
        if (try? ObjectDownloader.isIdentical(path: path, item: item)) == true { return nil }
        if let track, track.isInCloud, track.size == size, let etag = track.etag {
            let recorded = PullItem(
                key: track.key ?? "", size: track.size, etag: etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
                lastModified: nil, relativePath: "")
            if let md5 = recorded.plainMD5 {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                if descriptor >= 0 {
                    defer { close(descriptor) }
                    if ObjectDownloader.md5Hex(descriptor: descriptor, length: size) == md5 { return nil }
                }
            }
        }
        return .localChanges(path: path, known: track != nil)
    }
}
