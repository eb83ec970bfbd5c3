import Foundation
public import R2UpModel
package import R2UpStore
package import R2UpTransfer
import R2UpAudio

/// What `fetch` was asked that it cannot take: nothing is fetched when any argument is refused.
package enum FetchInputError: Error, Sendable, Equatable {
    /// No track r2up knows at or under this path.
    case unknownPath(String)
}

/// One track brought back, or not.
public struct FetchOutcome: Sendable, Equatable {
    public var path: String
    public var key: String
    public var size: Int64
    /// Bytes found verified on disk from an interrupted fetch.
    public var resumedBytes: Int64
    package var error: DownloadError?
    /// Another r2up (a second fetch of the same track) put the file in place first.
    package var fetchedElsewhere = false

    /// Why the track was not fetched, in the words `r2up fetch` prints; nil when it was.
    public var failure: Diagnosis? {
        guard let error else { return nil }
        // An object gone from the bucket is a failed transfer here, not a name typed wrong.
        let category: FailureCategory = if case .notFound = error { .uploadFailed } else { error.diagnosis.category }
        return Diagnosis(category: category, message: DownloadFailure.fetchMessage(error, key: key))
    }
}

/// A finished fetch.
public struct FetchSummary: Sendable {
    public var fetched: [FetchOutcome] = []
    public var failed: [FetchOutcome] = []
    /// Tracks named whose file is on disk already (never replaced by a fetch).
    public var alreadyLocal = 0
    /// The server down or refusing the run (connection refused, DNS, TLS, credentials): no
    /// further track was tried; those stay cloud only, with no error recorded.
    public var stoppedBy: Diagnosis?
    /// Tracks not tried because the run stopped.
    public var notTried = 0

    public var fetchedBytes: Int64 { fetched.reduce(0) { $0 + $1.size } }
    public var resumedBytes: Int64 { fetched.reduce(0) { $0 + $1.resumedBytes } }

    /// The run's outcome: the most serious of its failures (an object gone from the bucket is
    /// a failed transfer here, not a name typed wrong).
    public var category: FailureCategory { failed.map { $0.failure?.category ?? .uploadFailed }.reduce(stoppedBy?.category ?? .success, max) }
}

/// `r2up fetch`: brings offloaded (cloud only) tracks back to their own paths from their recorded
/// keys (seed 004's audio on demand), through the pull machinery: ranged parts into a hidden
/// temporary file beside the track, resumable after a kill, renamed into place only once its
/// size, the recorded ETag (and MD5, when the ETag is one) and the track's content digest check
/// out. The file gets back the mtime it had at upload, so the track is again the copy r2up
/// uploaded: it shows ↓ downloaded, and sync sees nothing to send.
package struct Fetcher: Sendable {
    package let puller: Puller
    var service: UploadService { puller.service }

    package init(puller: Puller) {
        self.puller = puller
    }

    /// The cloud-only tracks `paths` name (a folder: those under it), each path made absolute.
    /// A track whose file is on disk is counted, never fetched over.
    package func select(_ paths: [String]) throws(FetchSelectionError) -> (tracks: [StoredTrack], alreadyLocal: Int) {
        guard let store = puller.store else { return ([], 0) }
        var found: [String: StoredTrack] = [:]
        var local: Set<String> = []
        for argument in paths {
            let path = URL(fileURLWithPath: argument).standardizedFileURL.path
            let stored: [StoredTrack]
            do { stored = try store.storedTracks(at: path) } catch { throw .store(error) }
            let keyed = stored.filter { $0.track.key != nil }
            guard !keyed.isEmpty else { throw .input(.unknownPath(path)) }
            for track in keyed {
                var info = stat()
                if lstat(track.track.path, &info) == 0 {
                    local.insert(track.track.path)
                } else {
                    found[track.track.path] = track
                }
            }
        }
        return (found.values.sorted { $0.track.path < $1.track.path }, local.count)
    }

    /// Fetches the tracks, as many at once as the run's depth allows (read again after each one,
    /// as it adapts); `onOutcome` hears each one.
    package func run(
        _ tracks: [StoredTrack], progress: TransferProgress? = nil,
        onOutcome: @escaping @Sendable (FetchOutcome) -> Void = { _ in }
    ) async -> FetchSummary {
        progress?.expect(files: tracks.count, bytes: tracks.reduce(0) { $0 + $1.track.size })
        return await withTaskGroup(of: FetchOutcome.self) { group in
            var summary = FetchSummary()
            var next = 0
            var inFlight = 0
            while (summary.stoppedBy == nil && next < tracks.count) || inFlight > 0 {
                while summary.stoppedBy == nil && next < tracks.count && inFlight < max(1, puller.concurrency) {
                    let track = tracks[next]
                    next += 1
                    inFlight += 1
                    group.addTask { await self.fetch(track, progress: progress) }
                }
                guard let outcome = await group.next() else { break }
                inFlight -= 1
                if outcome.fetchedElsewhere {
                    summary.alreadyLocal += 1
                    continue
                }
                if outcome.error == nil { summary.fetched.append(outcome) } else { summary.failed.append(outcome) }
                if summary.stoppedBy == nil, let error = outcome.error { summary.stoppedBy = await stop(for: error) }
                onOutcome(outcome)
            }
            summary.notTried = tracks.count - next
            return summary
        }
    }

    /// The run's failure when `error` says every other track would meet it too: the endpoint
    /// refusing the connection, not resolving, failing TLS, or refusing the credentials.
    func stop(for error: DownloadError) async -> Diagnosis? {
        guard Self.stopsRun(error), case .s3(_, let underlying) = error else { return nil }
        return await service.diagnose(underlying, subject: nil)
    }

    /// Whether the track's file is on disk as uploaded (size and mtime as recorded).
    static func isInPlace(_ stored: StoredTrack) -> Bool {
        var info = stat()
        guard lstat(stored.track.path, &info) == 0 else { return false }
        return Int64(info.st_size) == stored.track.size && LocalFile.nanoseconds(info.st_mtim) == stored.track.mtimeNs
    }

    /// Whether `error` stops a fetch (the stop's line then says it once, not one line per track).
    package static func stopsRun(_ error: DownloadError) -> Bool {
        guard case .s3(_, let underlying) = error else { return false }
        let failure = Failure(underlying, subject: nil)
        return failure.scope == .run || [.connectionRefused, .dnsFailure, .tlsFailure].contains(failure.kind)
    }

    /// Brings one track back. Its row changes only at the end (downloaded, or the error): a fetch
    /// killed mid-way leaves it cloud only, with the partial bytes kept for the next fetch.
    func fetch(_ stored: StoredTrack, progress: TransferProgress?) async -> FetchOutcome {
        let track = stored.track
        let key = track.key ?? ""
        var outcome = FetchOutcome(path: track.path, key: key, size: track.size, resumedBytes: 0, error: nil)
        let etag = Offloader.bareETag(track.etag ?? "")
        let cloud = CloudCopy(bucket: service.bucket, key: key, etag: track.etag)
        let id = UUID()
        progress?.started(id: id, name: FilePath.name(track.path), size: track.size)
        func elsewhere() -> FetchOutcome {
            progress?.finished(id: id, size: track.size, succeeded: true)
            outcome.fetchedElsewhere = true
            return outcome
        }
        func fail(_ error: DownloadError) -> FetchOutcome {
            progress?.finished(id: id, size: track.size, succeeded: false)
            // Two fetches of one track share the temporary file: the one that lost the rename
            // finds the track in place, fetched by the other (which recorded it), not failed.
            if case .localFile = error, Self.isInPlace(stored) {
                outcome.fetchedElsewhere = true
                return outcome
            }
            // A server down is the run's failure, not the track's: it stays cloud only (☁).
            if !Self.stopsRun(error) {
                _ = try? puller.store?.failDownload(path: track.path, reason: error.diagnosis.message, cloud: cloud)
            }
            outcome.error = error
            return outcome
        }
        guard track.bucket == service.bucket else {
            return fail(.notFound(target: key, bucket: service.bucket))
        }
        let folder = (track.path as NSString).deletingLastPathComponent
        let name = (track.path as NSString).lastPathComponent
        let path: String
        do { path = try DownloadPath.prepareFolder(for: name, in: folder) } catch { return fail(error) }
        let item = PullItem(key: key, size: track.size, etag: etag, lastModified: nil, relativePath: name)
        let temporary = DownloadPath.temporaryPaths(for: path).data
        // Another r2up fetching this track now, or done since this run chose it: its work, not ours.
        let lock = FetchLock.take(partPath: temporary)
        defer { if case .held(let held) = lock { held.release() } }
        if case .busy = lock { return elsewhere() }
        if Self.isInPlace(stored) { return elsewhere() }
        let mtime = track.mtimeNs
        let digest = stored.digest
        do {
            let done = try await puller.downloader.download(
                item, to: path,
                onBytes: progress.map { progress in { @Sendable bytes in progress.sent(id, bytes: bytes) } },
                beforeRename: { descriptor in
                    if let digest, Offloader.digestMatches(path: temporary, recorded: digest) == false {
                        return .verificationFailed(key: key, reason: "its content digest is not the one recorded at upload")
                    }
                    // The mtime it had when uploaded: the file is that copy again.
                    let time = timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000))
                    _ = futimens(descriptor, [time, time])
                    return nil
                })
            outcome.resumedBytes = done.resumedBytes
        } catch {
            if case .s3(_, .service(let failure)) = error, failure.status == 404 {
                return fail(.notFound(target: key, bucket: service.bucket))
            }
            return fail(error)
        }
        progress?.finished(id: id, size: track.size, succeeded: true)
        var info = stat()
        if stat(path, &info) == 0 {
            _ = try? puller.store?.finishDownload(
                path: path, size: Int64(info.st_size), mtimeNs: LocalFile.nanoseconds(info.st_mtim), cloud: cloud)
        }
        return outcome
    }
}

/// `select` refused an argument, or the store could not be read.
package enum FetchSelectionError: Error, Sendable {
    case input(FetchInputError)
    case store(StoreError)
}
