import Foundation
package import R2UpStore
import R2UpModel

/// What `status` shows: the store's tracks with their state following their files (DESIGN §10),
/// and for a folder also every file `push DIR` would take that the store does not know yet.
package enum TrackScan {
    /// Every track under `folder`: each file the push scanner takes (the same `SyncScanner`
    /// and filters as `push DIR`), a file the store does not know as a local-only track, and
    /// each known track whose file the scan did not see (gone, or one the scan skips).
    ///
    /// The scan and the store's tracks both come in byte order of path and are walked side by
    /// side: no lookup table of the folder's files. A folder the store knows only under its
    /// real path (the argument is a link to it) is read there.
    /// `bucket`: the bucket the tracks are shown for (nil: any); an upload to another is not one to it.
    package static func tracks(under folder: String, store: Store?, bucket: String? = nil) throws(StoreError) -> ScannedTracks {
        var root = URL(fileURLWithPath: folder).standardizedFileURL.path
        var known = try store?.tracks(under: root) ?? []
        let real = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
        if known.isEmpty && real != root, let store {
            known = try store.tracks(under: real)
            if !known.isEmpty { root = real }
        }
        var result = ScannedTracks(known: known)
        result.bucket = bucket
        var next = 0
        func unseen(_ index: Int) {
            var info = stat()
            let track = known[index]
            let statted = stat(track.path, &info) == 0
            guard statted, (info.st_mode & S_IFMT) == S_IFREG else {
                // In a folder that cannot be read the file may well be there: as last recorded, not gone.
                if !statted && Self.cannotTell(errno: errno) {
                    result.append(path: track.path, size: track.size, mtimeNs: track.mtimeNs, known: index)
                } else {
                    result.append(path: track.path, size: -1, mtimeNs: 0, known: index)
                }
                return
            }
            let mtime = info.mtimeNs
            result.append(path: track.path, size: Int64(info.st_size), mtimeNs: mtime, known: index)
        }
        result.problems = SyncScanner().scan(root) { file in
            while next < known.count, known[next].path.utf8.lexicographicallyPrecedes(file.path.utf8) {
                unseen(next)
                next += 1
            }
            if next < known.count, known[next].path.utf8.elementsEqual(file.path.utf8) {
                result.append(path: file.path, size: file.size, mtimeNs: file.mtimeNs, known: next)
                next += 1
            } else if SyncFilter.temporaryNames.accepts(file.relativePath) {
                // A temporary name is no pending track: push, sync and watch never take it.
                result.append(path: file.path, size: file.size, mtimeNs: file.mtimeNs, known: nil)
            }
        }
        while next < known.count {
            unseen(next)
            next += 1
        }
        return result
    }

    /// The known tracks (`status` without a folder), each with its state following its file,
    /// as `bucket` sees it (nil: any bucket).
    package static func following(_ tracks: [TrackRecord], bucket: String? = nil) -> [TrackRecord] {
        tracks.map { seen(following($0), from: bucket) }
    }

    /// The track as `bucket` sees it: one uploaded to another bucket is not uploaded to this one
    /// (identity includes the bucket). nil: any bucket.
    package static func seen(_ track: TrackRecord, from bucket: String?) -> TrackRecord {
        guard let bucket, track.uploadState == .uploaded, let own = track.bucket, own != bucket else { return track }
        var track = track
        track.uploadState = .none
        return track
    }

    /// The track as its file stands now (one `stat`); as last recorded where that cannot be told.
    package static func following(_ track: TrackRecord) -> TrackRecord {
        var info = stat()
        let statted = stat(track.path, &info) == 0
        guard statted, (info.st_mode & S_IFMT) == S_IFREG else {
            return !statted && cannotTell(errno: errno) ? track : following(track, size: nil, mtimeNs: nil)
        }
        let mtime = info.mtimeNs
        return following(track, size: Int64(info.st_size), mtimeNs: mtime)
    }

    /// Whether a `stat` that failed with `errno` leaves it open whether the file is there: a
    /// folder on the way that r2up may not search (EACCES) or an I/O error, not ENOENT or ENOTDIR.
    static func cannotTell(errno failure: Int32) -> Bool {
        failure != ENOENT && failure != ENOTDIR
    }

    /// The track with its file at this size and mtime (nil: no file). An uploaded or downloaded
    /// track whose file moved on is no longer either ("changed since upload"); one whose file is
    /// gone keeps only its cloud copy, which shows as cloud only when its key is known.
    /// Uploading and failed states stay: they speak of a job, not of the file.
    package static func following(_ track: TrackRecord, size: Int64?, mtimeNs: Int64?) -> TrackRecord {
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

/// The tracks of a folder scan in path order, held compactly: a file costs its name's bytes (its
/// folder is shared) and five numbers, and a `TrackRecord` is made only when read.
package struct ScannedTracks: RandomAccessCollection, Sendable {
    struct Entry: Sendable {
        /// Index into `folders`.
        var folder: Int32
        /// Index into `known`, -1 for a file the store does not know.
        var known: Int32
        /// The name's bytes in `names`: one buffer, not a String (and its allocation) per file,
        /// which was 8 of `status`'s 29 MiB for 100,000 files.
        var nameStart: Int
        var nameEnd: Int
        /// -1: the known track's file is gone.
        var size: Int64
        var mtimeNs: Int64
    }

    /// The store's tracks under the folder.
    package let known: [TrackRecord]
    /// The bucket the tracks are shown for (`TrackScan.seen`); nil: any.
    package var bucket: String?
    /// What the scan could not take: a folder that cannot be read leaves its tracks as last recorded.
    package var problems: [ScanProblem] = []
    var entries: [Entry] = []
    /// Every file's name, one after the other.
    var names: [UInt8] = []
    /// Each folder's path (what comes before a path's last "/").
    var folders: [String] = []
    private var folderIndex: [String: Int32] = [:]

    init(known: [TrackRecord]) {
        self.known = known
    }

    mutating func append(path: String, size: Int64, mtimeNs: Int64, known: Int?) {
        let cut = path.utf8.lastIndex(of: 0x2F) ?? path.startIndex
        let folder: Int32
        // Files come folder by folder, mostly: the last folder is the usual answer.
        if let last = entries.last, folders[Int(last.folder)].utf8.elementsEqual(path[..<cut].utf8) {
            folder = last.folder
        } else {
            let name = String(path[..<cut])
            if let found = folderIndex[name] {
                folder = found
            } else {
                folder = Int32(folders.count)
                folders.append(name)
                folderIndex[name] = folder
            }
        }
        let start = cut == path.endIndex ? cut : path.utf8.index(after: cut)
        let nameStart = names.count
        names.append(contentsOf: path.utf8[start...])
        entries.append(
            Entry(
                folder: folder, known: known.map { Int32($0) } ?? -1, nameStart: nameStart, nameEnd: names.count, size: size,
                mtimeNs: mtimeNs))
    }

    /// An entry's file name, as bytes.
    func name(_ entry: Entry) -> ArraySlice<UInt8> { names[entry.nameStart..<entry.nameEnd] }

    package var startIndex: Int { 0 }
    package var endIndex: Int { entries.count }

    /// The track as its file stands (`TrackScan.following`); a file the store does not know is local only.
    package subscript(position: Int) -> TrackRecord {
        let entry = entries[position]
        guard entry.known >= 0 else {
            return TrackRecord(
                path: folders[Int(entry.folder)] + "/" + String(decoding: name(entry), as: UTF8.self), size: entry.size,
                mtimeNs: entry.mtimeNs,
                updatedAt: Date(timeIntervalSince1970: Double(entry.mtimeNs) / 1e9))
        }
        let track = TrackScan.seen(known[Int(entry.known)], from: bucket)
        if entry.size < 0 { return TrackScan.following(track, size: nil, mtimeNs: nil) }
        return TrackScan.following(track, size: entry.size, mtimeNs: entry.mtimeNs)
    }

    /// The positions sorted by folder, then name (bytes), and each position's folder: what
    /// grouping by folder needs, without making a path per file.
    package func folderOrder() -> (order: [Int], folder: (Int) -> Substring) {
        let rank = folders.indices.sorted { folders[$0].utf8.lexicographicallyPrecedes(folders[$1].utf8) }
        var rankOf = [Int](repeating: 0, count: folders.count)
        for (position, index) in rank.enumerated() { rankOf[index] = position }
        let (list, folderNames) = (entries, folders)
        var order = Array(list.indices)
        order.sort { i, j in
            let (x, y) = (rankOf[Int(list[i].folder)], rankOf[Int(list[j].folder)])
            if x != y { return x < y }
            return name(list[i]).lexicographicallyPrecedes(name(list[j]))
        }
        return (order, { folderNames[Int(list[$0].folder)][...] })
    }
}
