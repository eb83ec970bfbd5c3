import Foundation

/// What `status` shows: the store's tracks with their state following their files (DESIGN §10),
/// and for a folder also every file `push DIR` would take that the store does not know yet.
public enum TrackScan {
    /// Every track under `folder`: each file the push scanner takes (the same `SyncScanner`
    /// and filters as `push DIR`), a file the store does not know as a local-only track, and
    /// each known track whose file the scan did not see (gone, or one the scan skips).
    ///
    /// The scan and the store's tracks both come in byte order of path and are walked side by
    /// side: no lookup table of the folder's files. A folder the store knows only under its
    /// real path (the argument is a link to it) is read there.
    public static func tracks(under folder: String, store: Store?) throws(StoreError) -> [TrackRecord] {
        var root = URL(fileURLWithPath: folder).standardizedFileURL.path
        var known = try store?.tracks(under: root) ?? []
        let real = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
        if known.isEmpty && real != root, let store {
            known = try store.tracks(under: real)
            if !known.isEmpty { root = real }
        }
        var result: [TrackRecord] = []
        result.reserveCapacity(known.count)
        var next = 0
        _ = SyncScanner().scan(root) { file in
            while next < known.count, known[next].path.utf8.lexicographicallyPrecedes(file.path.utf8) {
                result.append(following(known[next]))
                next += 1
            }
            if next < known.count, known[next].path.utf8.elementsEqual(file.path.utf8) {
                result.append(following(known[next], size: file.size, mtimeNs: file.mtimeNs))
                next += 1
            } else {
                result.append(
                    TrackRecord(
                        path: file.path, size: file.size, mtimeNs: file.mtimeNs,
                        updatedAt: Date(timeIntervalSince1970: Double(file.mtimeNs) / 1e9)))
            }
        }
        while next < known.count {
            result.append(following(known[next]))
            next += 1
        }
        return result
    }

    /// The known tracks (`status` without a folder), each with its state following its file.
    public static func following(_ tracks: [TrackRecord]) -> [TrackRecord] {
        tracks.map { following($0) }
    }

    /// The track as its file stands now (one `stat`).
    public static func following(_ track: TrackRecord) -> TrackRecord {
        var info = stat()
        guard stat(track.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return following(track, size: nil, mtimeNs: nil)
        }
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return following(track, size: Int64(info.st_size), mtimeNs: mtime)
    }

    /// The track with its file at this size and mtime (nil: no file). An uploaded or downloaded
    /// track whose file moved on is no longer either ("changed since upload"); one whose file is
    /// gone keeps only its cloud copy, which shows as cloud only when its key is known.
    /// Uploading and failed states stay: they speak of a job, not of the file.
    public static func following(_ track: TrackRecord, size: Int64?, mtimeNs: Int64?) -> TrackRecord {
        var track = track
        guard let size, let mtimeNs else {
            track.isOnDisk = false
            if track.uploadState == .uploaded { track.uploadState = .none }
            if track.downloadState == .downloaded { track.downloadState = .none }
            return track
        }
        let moved = track.size != size || track.mtimeNs != mtimeNs
        guard moved, track.uploadState == .uploaded || track.downloadState == .downloaded else { return track }
        if track.uploadState == .uploaded { track.uploadState = .none }
        if track.downloadState == .downloaded { track.downloadState = .none }
        track.changedSinceUpload = true
        return track
    }
}
