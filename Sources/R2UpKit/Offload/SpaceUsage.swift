import Foundation
package import R2UpModel
package import R2UpStore
package import R2UpTransfer
import R2UpAudio

/// Bytes of a group of tracks, here and in the bucket (`r2up du`).
public struct SpaceCounts: Sendable, Equatable, Codable {
    public var tracks = 0
    /// Bytes of the files on this disk.
    public var onDisk: Int64 = 0
    /// Bytes of the tracks' cloud copies, as the store knows them (an edited file's old copy too);
    /// in a total, each object once however many tracks point at it (`CountedObjects`).
    public var inBucket: Int64 = 0
    /// On disk with no cloud copy of these bytes: not yet safe.
    public var localOnly: Int64 = 0
    /// In the bucket with no file here: offloaded, or deleted by hand (in a total, each object once).
    public var cloudOnly: Int64 = 0
    /// On disk and the same bytes in the bucket: what `offload` can free.
    public var both: Int64 = 0

    public init() {}

    mutating func add(_ other: SpaceCounts) {
        tracks += other.tracks
        onDisk += other.onDisk
        inBucket += other.inBucket
        localOnly += other.localOnly
        cloudOnly += other.cloudOnly
        both += other.both
    }

    /// Counts one track: `diskSize` is its file's size now (nil: no file here).
    mutating func add(_ track: TrackRecord, diskSize: Int64?) {
        tracks += 1
        let cloud = track.key != nil
        guard let diskSize else {
            if cloud {
                cloudOnly += track.size
                inBucket += track.size
            }
            return
        }
        onDisk += diskSize
        if cloud && (track.uploadState == .uploaded || track.downloadState == .downloaded) {
            both += diskSize
            inBucket += track.size
        } else {
            localOnly += diskSize
            // A copy of earlier bytes (the file changed since) still takes room in the bucket.
            if cloud { inBucket += track.size }
        }
    }
}

/// The objects (bucket and key) a total has counted: several tracks can point at one object (a
/// pushed folder pulled into another), whose bytes the bucket holds once.
package struct CountedObjects: Sendable {
    private var inBucket = Set<String>()
    private var cloudOnly = Set<String>()

    package init() {}

    /// Adds `track`'s counts to `totals`, without the bytes of an object counted already.
    mutating func add(_ track: TrackRecord, diskSize: Int64?, to totals: inout SpaceCounts) {
        var counts = SpaceCounts()
        counts.add(track, diskSize: diskSize)
        if let key = track.key {
            let object = (track.bucket ?? "") + "\u{0}" + key
            if counts.inBucket != 0 && !inBucket.insert(object).inserted { counts.inBucket = 0 }
            if counts.cloudOnly != 0 && !cloudOnly.insert(object).inserted { counts.cloudOnly = 0 }
        }
        totals.add(counts)
    }
}

/// `r2up du`: per folder, bytes on disk, in the bucket, only local, only in the cloud, in both,
/// from the store and one `stat` per file (a folder argument: the same walk as `status DIR`);
/// no request to the bucket.
package struct SpaceUsage: Sendable {
    package struct Group: Sendable, Equatable {
        /// The folder, relative to the folder measured ("." for itself), or absolute; by album
        /// or artist, the group's title for tagged tracks.
        package var folder: String
        package var counts: SpaceCounts
        /// folder, or the album or artist the name stands for.
        package var kind: StatusGrouping = .folder
    }

    package var groups: [Group] = []
    /// Over every track, each object's bytes in the bucket once (not the groups' sum).
    package var totals = SpaceCounts()
    /// The objects `totals` counted.
    package var counted = CountedObjects()
    /// Subfolders that could not be read: their tracks count as last recorded.
    package var problems: [ScanProblem] = []

    /// Every file under `folder` that push would take, known or not, grouped by its folder;
    /// a track in `groups` (path → album or artist title, `groupNames`) goes to that group instead.
    /// `counted`: objects an earlier total counted (several folders summed: each object once).
    package static func measure(
        folder: String, store: Store?, groups named: [String: String] = [:], by grouping: StatusGrouping = .folder,
        counted: CountedObjects = CountedObjects()
    ) throws(StoreError) -> SpaceUsage {
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        let scanned = try TrackScan.tracks(under: root, store: store)
        var byFolder = [SpaceCounts](repeating: SpaceCounts(), count: scanned.folders.count)
        var byName: [String: SpaceCounts] = [:]
        var usage = SpaceUsage()
        usage.counted = counted
        for position in scanned.indices {
            let entry = scanned.entries[position]
            let size: Int64? = entry.size < 0 ? nil : entry.size
            usage.counted.add(scanned[position], diskSize: size, to: &usage.totals)
            // A path is made only when tags may regroup it: 100,000 files by folder make none.
            if !named.isEmpty, let name = named[scanned.folders[Int(entry.folder)] + "/" + String(decoding: scanned.name(entry), as: UTF8.self)]
            {
                byName[name, default: SpaceCounts()].add(scanned[position], diskSize: size)
            } else {
                byFolder[Int(entry.folder)].add(scanned[position], diskSize: size)
            }
        }
        usage.problems = scanned.problems
        for (index, name) in scanned.folders.enumerated() where byFolder[index].tracks > 0 || named.isEmpty {
            usage.groups.append(Group(folder: relative(name, to: root), counts: byFolder[index]))
        }
        for (name, counts) in byName { usage.groups.append(Group(folder: name, counts: counts, kind: grouping)) }
        usage.finish()
        return usage
    }

    /// Each tagged track's group title by album ("Début (1993) — Björk") or by artist; tracks
    /// without an album tag (by album) are left out and stay in their folder's group.
    package static func groupNames(_ tags: [String: AudioTags], by grouping: StatusGrouping) -> [String: String] {
        guard grouping != .folder else { return [:] }
        var names: [String: String] = [:]
        let tagged = tags.filter { $0.value.hasTags }.map { (path: $0.key, tags: $0.value) }
        // Compilations under "Various Artists", as `status` files them.
        let artists = AlbumGrouping.filingArtists(tagged.map { AlbumGrouping.Track(path: $0.path, tags: $0.tags) })
        for ((path, tags), artist) in zip(tagged, artists) {
            let artist = artist ?? tags.filingArtist
            if grouping == .album {
                guard let album = tags.album else { continue }
                names[path] = GroupHeading(by: .album, album: album, artist: artist, year: tags.year).title
            } else {
                names[path] = artist
            }
        }
        return names
    }

    /// The totals of a folder's walk (`measure(folder:)`'s, without its groups); `counted`
    /// carries the objects counted across several walks.
    static func totals(of scanned: ScannedTracks, counted: inout CountedObjects) -> SpaceCounts {
        var totals = SpaceCounts()
        for position in scanned.indices {
            let size = scanned.entries[position].size
            counted.add(scanned[position], diskSize: size < 0 ? nil : size, to: &totals)
        }
        return totals
    }

    /// Every track the store knows, grouped by its folder (absolute), each file `stat`ed.
    package static func measure(store: Store?) throws(StoreError) -> SpaceUsage {
        var byFolder: [String: SpaceCounts] = [:]
        var usage = SpaceUsage()
        for track in try store?.tracks(under: "/") ?? [] {
            let now = TrackScan.following(track)
            var info = stat()
            let size: Int64? = now.isOnDisk ? (stat(track.path, &info) == 0 ? Int64(info.st_size) : track.size) : nil
            byFolder[(track.path as NSString).deletingLastPathComponent, default: SpaceCounts()].add(now, diskSize: size)
            usage.counted.add(now, diskSize: size, to: &usage.totals)
        }
        usage.groups = byFolder.map { Group(folder: $0.key, counts: $0.value) }
        usage.finish()
        return usage
    }

    static func relative(_ folder: String, to root: String) -> String {
        if folder == root { return "." }
        let base = root == "/" ? "/" : root + "/"
        return folder.hasPrefix(base) ? String(folder.dropFirst(base.count)) : folder
    }

    private mutating func finish() {
        groups.sort { ($0.kind == .folder ? 1 : 0, $0.folder) < ($1.kind == .folder ? 1 : 0, $1.folder) }
    }
}

/// `du --remote`: the bucket's view of the prefix, against the store's.
package struct RemoteSpace: Sendable, Equatable, Codable {
    package var prefix: String
    /// Every object listed under the prefix.
    package var objects = 0
    package var bytes: Int64 = 0
    /// Tracks whose recorded key has no object.
    package var missing = 0
    package var missingBytes: Int64 = 0
    /// Tracks whose object has another size or ETag than recorded.
    package var replaced = 0
    /// Objects no track claims (uploaded by something else, or by a store since lost).
    package var unknownObjects = 0
    package var unknownBytes: Int64 = 0
    /// The tracks found missing or replaced, for one line each.
    package var mismatched: [String] = []

    /// The folder part ("a/b/") every key of `tracks` starts with; "" when they share none.
    package static func commonPrefix(_ tracks: [TrackRecord]) -> String {
        var common: Substring?
        for key in tracks.compactMap(\.key) {
            let folder = key[..<(key.lastIndex(of: "/").map { key.index(after: $0) } ?? key.startIndex)]
            guard let shared = common else {
                common = folder
                continue
            }
            var end = shared.startIndex
            var other = folder.utf8.makeIterator()
            for index in shared.utf8.indices {
                guard let byte = other.next(), byte == shared.utf8[index] else { break }
                end = shared.utf8.index(after: index)
            }
            var cut = shared[..<end]
            // Only whole folders: back to the last "/".
            if let slash = cut.lastIndex(of: "/") { cut = cut[...slash] } else { cut = "" }
            common = cut
        }
        return common.map(String.init) ?? ""
    }

    /// Lists `prefix` and compares it with the known tracks under `folder`.
    package static func check(
        service: UploadService, prefix: String, known: [TrackRecord]
    ) async throws(S3ClientError) -> RemoteSpace {
        let listing = try await service.client.listAllObjects(bucket: service.bucket, prefix: prefix)
        var remote = RemoteSpace(prefix: prefix)
        var objects: [String: ObjectSummary] = [:]
        for object in listing.objects where !(object.key.hasSuffix("/") && object.size == 0) {
            objects[object.key] = object
            remote.objects += 1
            remote.bytes += object.size
        }
        var claimed: Set<String> = []
        for track in known {
            guard let key = track.key, track.bucket == service.bucket, key.hasPrefix(prefix) else { continue }
            claimed.insert(key)
            guard let object = objects[key] else {
                remote.missing += 1
                remote.missingBytes += track.size
                remote.mismatched.append(track.path)
                continue
            }
            if object.size != track.size || Offloader.bareETag(object.etag) != Offloader.bareETag(track.etag ?? "") {
                remote.replaced += 1
                remote.mismatched.append(track.path)
            }
        }
        for (key, object) in objects where !claimed.contains(key) {
            remote.unknownObjects += 1
            remote.unknownBytes += object.size
        }
        return remote
    }
}
