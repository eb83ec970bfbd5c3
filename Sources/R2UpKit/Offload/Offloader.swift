import Foundation
import R2UpModel
package import R2UpStore
import R2UpTransfer
import R2UpAudio

/// `r2up offload`: removes local copies of tracks whose cloud copy is verified now, leaving them
/// cloud only (☁) with their history and identity; `r2up fetch` brings them back.
///
/// Each track is checked in two steps: on disk first (its file is the copy r2up uploaded: size
/// and mtime as recorded, its folder writable, old enough), then in the bucket with one HEAD
/// (size and ETag as recorded) and, when the upload recorded a content digest, the file's bytes
/// against it. HEADs run at the run's adaptive depth (`TransferSlots`); no object is ever read (no GET).
package struct Offloader: Sendable {
    package let service: UploadService
    package let store: Store
    let retry = RequestRetryPolicy()
    static let maxAttempts = 3
    /// Removals recorded per store transaction.
    static let recordBatch = 256

    package init(service: UploadService, store: Store) {
        self.service = service
        self.store = store
    }

    /// The tracks `paths` name, each path made absolute; throws on the first bad argument.
    package func select(_ paths: [String]) throws(OffloadSelectionError) -> [StoredTrack] {
        var found: [String: StoredTrack] = [:]
        for argument in paths {
            let path = URL(fileURLWithPath: argument).standardizedFileURL.path
            let stored: [StoredTrack]
            do { stored = try store.storedTracks(at: path) } catch { throw .store(error) }
            var info = stat()
            if lstat(path, &info) != 0 {
                guard !stored.isEmpty else { throw .input(.noSuchPath(path)) }
                // A track offloaded already: the run counts it as cloud only, no error.
                if let track = stored.first(where: { $0.track.path == path }), track.track.key != nil {
                    found[path] = track
                    continue
                }
            } else if (info.st_mode & S_IFMT) == S_IFREG {
                guard let track = stored.first(where: { $0.track.path == path }), track.track.key != nil else {
                    throw .input(.neverUploaded(path))
                }
                found[path] = track
                continue
            } else if (info.st_mode & S_IFMT) != S_IFDIR {
                throw .input(.notAFileOrFolder(path))
            }
            let under = stored.filter { $0.track.path != path }
            guard under.contains(where: { $0.track.key != nil }) else { throw .input(.outsideLibrary(path)) }
            for track in under { found[track.track.path] = track }
        }
        return found.values.sorted { $0.track.path < $1.track.path }
    }

    /// Checks and offloads `tracks`; `onOutcome` hears each track as it is decided (kept, or freed).
    package func run(
        _ tracks: [StoredTrack], options: OffloadOptions, onOutcome: @escaping @Sendable (OffloadOutcome) -> Void = { _ in }
    ) async -> OffloadSummary {
        var summary = OffloadSummary()
        summary.dryRun = options.dryRun
        func keep(_ outcome: OffloadOutcome) {
            summary.kept.append(outcome)
            onOutcome(outcome)
        }
        // Rows to record as offloaded, written a batch at a time: a transaction per track would
        // cost more than its HEAD at a deep depth. Before the write a kill leaves the file gone
        // and the row saying uploaded, which shows cloud only all the same (status follows the file).
        var unrecorded: [String] = []
        func flush() {
            if !options.dryRun { try? store.recordOffload(paths: unrecorded) }
            unrecorded.removeAll(keepingCapacity: true)
        }
        func record(_ path: String) {
            unrecorded.append(path)
            if unrecorded.count >= Self.recordBatch { flush() }
        }
        // Step 1, on disk: no request for a track that fails here.
        var eligible: [Candidate] = []
        for stored in tracks {
            switch localCheck(stored, options: options) {
            case .gone:
                summary.alreadyCloudOnly += 1
                // Removed by a run killed before it recorded it: record it now (a fetch's
                // error or one under way stays as it is).
                if stored.track.downloadState == .downloaded { record(stored.track.path) }
            case .kept(let outcome): keep(outcome)
            case .eligible(let candidate): eligible.append(candidate)
            }
        }
        if options.keepNewest > 0 {
            eligible.sort { ($0.stored.uploadedAt, $0.stored.track.path) > ($1.stored.uploadedAt, $1.stored.track.path) }
            for candidate in eligible.prefix(options.keepNewest) {
                keep(OffloadOutcome(path: candidate.stored.track.path, size: candidate.seen.size, kept: .keptNewest))
            }
            eligible = Array(eligible.dropFirst(options.keepNewest)).sorted { $0.stored.track.path < $1.stored.track.path }
        }

        // Step 2, in the bucket: HEADs at the run's depth (the service's slots, which learn from
        // each reply), read again after every answer; each answer is acted on as it comes.
        let slots = service.uploader.slots
        let cap = options.concurrency.map { max(1, $0) } ?? Int.max
        await withTaskGroup(of: (Candidate, RemoteVerdict, Int).self) { group in
            var next = 0
            var inFlight = 0
            var stopped = false
            while (!stopped && next < eligible.count) || inFlight > 0 {
                while !stopped && next < eligible.count && inFlight < min(cap, max(1, slots.limit)) {
                    let candidate = eligible[next]
                    next += 1
                    inFlight += 1
                    group.addTask { await self.remoteCheck(candidate) }
                }
                guard let (candidate, verdict, requests) = await group.next() else { break }
                inFlight -= 1
                summary.requests += requests
                let path = candidate.stored.track.path
                switch verdict {
                case .verified:
                    switch options.dryRun ? .removed : remove(candidate) {
                    case .kept(let reason):
                        keep(OffloadOutcome(path: path, size: candidate.seen.size, kept: reason))
                    case .gone:
                        summary.alreadyCloudOnly += 1
                    case .removed:
                        record(path)
                        let outcome = OffloadOutcome(path: path, size: candidate.seen.size, kept: nil)
                        summary.freed.append(outcome)
                        onOutcome(outcome)
                    }
                case .gone:
                    // Another r2up offloading the same tracks (or the user) removed it meanwhile.
                    summary.alreadyCloudOnly += 1
                case .kept(let reason):
                    keep(OffloadOutcome(path: path, size: candidate.seen.size, kept: reason))
                case .stop(let diagnosis):
                    keep(OffloadOutcome(path: path, size: candidate.seen.size, kept: .server(diagnosis)))
                    if summary.stoppedBy == nil { summary.stoppedBy = diagnosis }
                    stopped = true
                }
            }
            // What was never sent stays, unchecked.
            for candidate in eligible[next...] {
                keep(OffloadOutcome(path: candidate.stored.track.path, size: candidate.seen.size, kept: .notChecked))
            }
        }
        flush()
        if summary.requests > 0 { summary.depth = slots.depthReport }
        return summary
    }

    // MARK: - Checks

    struct Candidate: Sendable {
        var stored: StoredTrack
        var key: String
        /// The file as checked: size, mtime, inode; removed only if it is still this file.
        var seen: SeenFile
        var inode: UInt64
    }

    enum LocalVerdict {
        case gone
        case kept(OffloadOutcome)
        case eligible(Candidate)
    }

    enum RemoteVerdict: Sendable {
        case verified
        /// The file went away during the check: cloud only already.
        case gone
        case kept(OffloadReason)
        case stop(Diagnosis)
    }

    func localCheck(_ stored: StoredTrack, options: OffloadOptions) -> LocalVerdict {
        let track = stored.track
        func kept(_ reason: OffloadReason, size: Int64 = track.size) -> LocalVerdict {
            .kept(OffloadOutcome(path: track.path, size: size, kept: reason))
        }
        var info = stat()
        guard lstat(track.path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return track.key == nil ? kept(.notUploaded) : .gone }
            return kept(.unreadable(String(cString: strerror(errno))))
        }
        guard let key = track.key, track.uploadState == .uploaded || track.downloadState == .downloaded else {
            return kept(.notUploaded)
        }
        guard track.bucket == service.bucket else { return kept(.otherBucket(track.bucket ?? "")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return kept(.notRegularFile) }
        let size = Int64(info.st_size)
        let mtime = LocalFile.nanoseconds(info.st_mtim)
        guard size == track.size, mtime == track.mtimeNs else { return kept(.changedSinceUpload, size: size) }
        let folder = (track.path as NSString).deletingLastPathComponent
        if let problem = Self.writeProblem(folder: folder) { return kept(.folderNotWritable(problem), size: size) }
        if let olderThan = options.olderThan {
            let modified = Date(timeIntervalSince1970: Double(mtime) / 1e9)
            let since = max(stored.uploadedAt, modified)
            let age = options.now.timeIntervalSince(since)
            let limit = Double(olderThan.components.seconds) + Double(olderThan.components.attoseconds) / 1e18
            if age < limit { return kept(.tooRecent, size: size) }
        }
        return .eligible(Candidate(stored: stored, key: key, seen: SeenFile(size: size, mtimeNs: mtime), inode: UInt64(info.st_ino)))
    }

    /// Why files in `folder` cannot be removed, or nil. Root may write anywhere; a folder whose
    /// mode grants no one write access is still taken as the user's "keep these".
    static func writeProblem(folder: String) -> String? {
        if access(folder, W_OK) != 0 { return String(cString: strerror(errno)) }
        var info = stat()
        if stat(folder, &info) == 0, info.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0 { return "it is read-only" }
        return nil
    }

    /// HEAD (with retries for network trouble and 5xx), then the content digest.
    func remoteCheck(_ candidate: Candidate) async -> (Candidate, RemoteVerdict, Int) {
        let track = candidate.stored.track
        var attempt = 0
        while true {
            attempt += 1
            do {
                let head = try await service.uploader.slots.withSlot { () throws(S3ClientError) -> ObjectInfo? in
                    try await service.client.headObject(bucket: service.bucket, key: candidate.key)
                }
                guard let info = head else {
                    return (candidate, .kept(.objectMissing(key: candidate.key)), attempt)
                }
                if info.size != track.size {
                    return (
                        candidate,
                        .kept(.objectReplaced(key: candidate.key, field: "size", recorded: "\(track.size)", found: "\(info.size)")),
                        attempt
                    )
                }
                let recorded = Self.bareETag(track.etag ?? "")
                let found = Self.bareETag(info.etag)
                if recorded.isEmpty || recorded != found {
                    return (
                        candidate, .kept(.objectReplaced(key: candidate.key, field: "ETag", recorded: recorded, found: found)), attempt
                    )
                }
                if let digest = candidate.stored.digest {
                    switch Self.digestMatches(path: track.path, recorded: digest) {
                    case .some(false): return (candidate, .kept(.contentChanged), attempt)
                    case .none:
                        if Self.isGone(track.path) { return (candidate, .gone, attempt) }
                        return (candidate, .kept(.unreadable("cannot read it to compare its bytes")), attempt)
                    case .some(true): break
                    }
                }
                return (candidate, .verified, attempt)
            } catch {
                let failure = Failure(error, subject: candidate.key)
                // The server down or refusing this run: every other HEAD would fail the same way.
                let kind = failure.kind
                if failure.scope == .run || kind == .connectionRefused || kind == .dnsFailure || kind == .tlsFailure {
                    if kind == .connectionRefused, attempt < Self.maxAttempts, let delay = retry.delayBeforeRetry(kind, attempt: attempt) {
                        try? await Task.sleep(for: delay)
                        continue
                    }
                    // Refused before the server ever answered: the endpoint is wrong or down (exit 3, as push).
                    let stop = kind == .connectionRefused ? await service.diagnose(error, subject: nil) : Diagnosis(error)
                    return (candidate, .stop(stop), attempt)
                }
                guard attempt < Self.maxAttempts, let delay = retry.delayBeforeRetry(kind, attempt: attempt) else {
                    return (candidate, .kept(.server(failure.diagnosis)), attempt)
                }
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// Whether the file's bytes have the recorded digest; nil when it cannot be read or the
    /// digest is of a form r2up does not compute.
    static func digestMatches(path: String, recorded: String) -> Bool? {
        guard let file = try? LocalFile(path: path), let digest = try? ContentDigest.of(file, like: recorded) else { return nil }
        return digest == recorded
    }

    static func bareETag(_ etag: String) -> String {
        etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
    }

    enum Removal: Equatable {
        case removed
        /// Already gone: another r2up offloading the same tracks got there first.
        case gone
        case kept(OffloadReason)
    }

    /// Whether nothing is at `path` any more.
    static func isGone(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    /// Removes the file if it is still the one checked (same inode, size, mtime); the caller
    /// records it. `unlink` is atomic: a kill leaves the track either fully local or cloud only.
    func remove(_ candidate: Candidate) -> Removal {
        let path = candidate.stored.track.path
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .gone }
            return .kept(.unreadable(String(cString: strerror(errno))))
        }
        guard UInt64(info.st_ino) == candidate.inode, Int64(info.st_size) == candidate.seen.size,
            LocalFile.nanoseconds(info.st_mtim) == candidate.seen.mtimeNs
        else { return .kept(.changedSinceUpload) }
        guard unlink(path) == 0 else {
            // Two offloads of one track: the other unlinked it between our lstat and unlink.
            if errno == ENOENT { return .gone }
            let reason = String(cString: strerror(errno))
            return .kept(errno == EACCES || errno == EPERM || errno == EROFS ? .folderNotWritable(reason) : .removeFailed(reason))
        }
        return .removed
    }
}

/// `select` refused an argument, or the store could not be read.
package enum OffloadSelectionError: Error, Sendable {
    case input(OffloadInputError)
    case store(StoreError)
}
