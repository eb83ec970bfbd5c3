import Foundation

/// A group of tracks as `r2up status` shows it: an album (or artist) where tags say so, else a folder.
public struct TrackGroup<Track: Sendable>: Sendable {
    /// The folder the tracks are in (by album or artist: the first track's).
    public var folder: String
    /// The album or artist the group stands for; nil for a folder group.
    public var heading: GroupHeading?
    /// Seed 000's header state ("↑ 12/18").
    public var summary: GroupSummary
    /// In the order `status` lists them.
    public var tracks: [Track]

    /// A name that stays the same while the group's tracks change state: the album and artist,
    /// or the folder.
    public var id: String {
        guard let heading else { return "folder:" + folder }
        return "\(heading.by.rawValue):\(heading.artist)\u{1F}\(heading.album ?? "")"
    }

    /// The title a header shows: the heading's, or the folder.
    public var title: String { heading?.title ?? folder }
}

/// The grouping of `r2up status`, for any track type that tells its path and upload state.
public enum TrackGroups {
    /// Groups by album or artist where tracks carry tags (a track without an album tag, by album,
    /// stays in its folder's group, after the albums); by folder otherwise. `by` nil: by album
    /// when any track has an album tag, else by folder. Folders and tracks in byte order of path.
    public static func make<Track: Sendable>(
        _ tracks: [Track], path: (Track) -> String, state: (Track) -> UploadState,
        tags: [String: AudioTags], by: StatusGrouping?
    ) -> [TrackGroup<Track>] {
        let grouping = by ?? (tags.values.contains { $0.album != nil } ? .album : .folder)
        let tags = tags.filter { $0.value.hasTags }
        guard grouping != .folder else { return byFolder(tracks, path: path, state: state) }
        var tagged: [GroupKey: [Track]] = [:]
        var untagged: [Track] = []
        // Filed as `status` files them: a compilation under "Various Artists" (`AlbumGrouping`).
        let filing = AlbumGrouping.filingArtists(tracks.map { AlbumGrouping.Track(path: path($0), tags: tags[path($0)]) })
        for (track, artist) in zip(tracks, filing) {
            guard let found = tags[path(track)], let artist, grouping == .artist || found.album != nil else {
                untagged.append(track)
                continue
            }
            tagged[GroupKey(artist: artist, album: grouping == .album ? found.album : nil), default: []].append(track)
        }
        var groups: [TrackGroup<Track>] = []
        for (key, members) in tagged {
            let sorted = members.sorted { a, b in
                let (x, y) = (tags[path(a)], tags[path(b)])
                if grouping == .artist, x?.album != y?.album { return (x?.album ?? "") < (y?.album ?? "") }
                if (x?.disc ?? 1) != (y?.disc ?? 1) { return (x?.disc ?? 1) < (y?.disc ?? 1) }
                if (x?.track ?? 0) != (y?.track ?? 0) { return (x?.track ?? 0) < (y?.track ?? 0) }
                return path(a) < path(b)
            }
            let durations = sorted.compactMap { tags[path($0)]?.durationMs }
            let years = sorted.compactMap { tags[path($0)]?.year }
            let heading = GroupHeading(
                by: grouping, album: key.album, artist: key.artist, year: grouping == .album ? years.min() : nil,
                durationMs: durations.isEmpty ? nil : durations.reduce(0, +))
            groups.append(TrackGroup(
                folder: (path(sorted[0]) as NSString).deletingLastPathComponent, heading: heading,
                summary: GroupSummary(states: sorted.map(state)), tracks: sorted))
        }
        groups.sort { a, b in
            guard let x = a.heading, let y = b.heading else { return false }
            if x.artist != y.artist { return x.artist.localizedStandardCompare(y.artist) == .orderedAscending }
            if x.year != y.year { return (x.year ?? 0) < (y.year ?? 0) }
            return (x.album ?? "").localizedStandardCompare(y.album ?? "") == .orderedAscending
        }
        return groups + byFolder(untagged, path: path, state: state)
    }

    /// Groups by parent folder: folders, then paths, in byte order.
    static func byFolder<Track: Sendable>(
        _ tracks: [Track], path: (Track) -> String, state: (Track) -> UploadState
    ) -> [TrackGroup<Track>] {
        let paths = tracks.map(path)
        let folders: [Substring] = paths.map { $0[..<($0.utf8.lastIndex(of: 0x2F) ?? $0.startIndex)] }
        let order = paths.indices.sorted { i, j in
            let (x, y) = (folders[i].utf8, folders[j].utf8)
            if !x.elementsEqual(y) { return x.lexicographicallyPrecedes(y) }
            return paths[i].utf8.lexicographicallyPrecedes(paths[j].utf8)
        }
        var groups: [TrackGroup<Track>] = []
        var start = 0
        while start < order.count {
            let name = folders[order[start]]
            var end = start + 1
            while end < order.count, folders[order[end]].utf8.elementsEqual(name.utf8) { end += 1 }
            let members = order[start..<end].map { tracks[$0] }
            groups.append(TrackGroup(
                folder: name.isEmpty ? "/" : String(name), heading: nil,
                summary: GroupSummary(states: members.map(state)), tracks: members))
            start = end
        }
        return groups
    }
}

/// An album (or, by artist, an artist) that tracks are grouped under.
private struct GroupKey: Hashable {
    var artist: String
    var album: String?
}
