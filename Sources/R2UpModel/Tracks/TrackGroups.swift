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
    /// An album's discs, when it has more than one (`members`: positions in `tracks`); empty otherwise.
    public var discs: [DiscSection] = []

    /// A name that stays the same while the group's tracks change state: `folder:PATH`,
    /// `album:ARTIST/ALBUM` or `artist:ARTIST`. It goes into HTML attributes, form posts and CSS
    /// selectors as it is, so `%`, control characters (a page or a form would change them) and a
    /// `/` inside a name are percent-encoded: every group has one such id, and no two share one.
    public var id: String {
        guard let heading else { return "folder:" + Self.idPart(folder, keepingSlash: true) }
        let album = heading.album.map { "/" + Self.idPart($0, keepingSlash: false) } ?? ""
        return heading.by.rawValue + ":" + Self.idPart(heading.artist, keepingSlash: false) + album
    }

    /// `text` with `%`, control characters and (unless `keepingSlash`) `/` as `%XX` of their UTF-8 bytes.
    static func idPart(_ text: String, keepingSlash: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let encoded = scalar == "%" || (scalar == "/" && !keepingSlash) || scalar.properties.generalCategory == .control
            guard encoded else {
                out.unicodeScalars.append(scalar)
                continue
            }
            for byte in String(scalar).utf8 { out += String(format: "%%%02X", byte) }
        }
        return out
    }

    /// The title a header shows: the heading's, or the folder.
    public var title: String { heading?.title ?? folder }
}

/// The grouping of `r2up status`, for any track type that tells its path and upload state:
/// `status` and `serve` (and an app's library) group by this one rule.
public enum TrackGroups {
    /// The grouping `by` stands for: nil is by album when any track has an album tag, else by folder.
    public static func grouping(_ by: StatusGrouping?, tags: [String: AudioTags]) -> StatusGrouping {
        by ?? (tags.values.contains { $0.album != nil } ? .album : .folder)
    }

    /// Groups by album or artist where tracks carry tags (`AlbumGrouping`: compilations under
    /// "Various Artists", discs as sections); a track without (no album tag, by album) stays in
    /// its folder's group, after the albums. By folder otherwise. `by` nil: by album when any
    /// track has an album tag, else by folder. Folders and tracks in byte order of path.
    public static func make<Track: Sendable>(
        _ tracks: [Track], path: (Track) -> String, state: (Track) -> UploadState,
        tags: [String: AudioTags], by: StatusGrouping?
    ) -> [TrackGroup<Track>] {
        let grouping = grouping(by, tags: tags)
        let tags = tags.filter { $0.value.hasTags }
        guard grouping != .folder else { return byFolder(tracks, path: path, state: state) }
        let inputs = tracks.map { AlbumGrouping.Track(path: path($0), tags: tags[path($0)]) }
        let (groups, untagged) = grouping == .album
            ? byAlbum(tracks, inputs, path: path, state: state) : byArtist(tracks, inputs, path: path, state: state)
        return groups + byFolder(untagged.map { tracks[$0] }, path: path, state: state)
    }

    /// The albums (`AlbumGrouping.albums`), and the indices of the tracks in none.
    private static func byAlbum<Track: Sendable>(
        _ tracks: [Track], _ inputs: [AlbumGrouping.Track], path: (Track) -> String, state: (Track) -> UploadState
    ) -> (groups: [TrackGroup<Track>], untagged: [Int]) {
        let (albums, ungrouped) = AlbumGrouping.albums(inputs)
        let groups = albums.map { album in
            let heading = GroupHeading(
                by: .album, album: album.album, artist: album.artist, year: album.year, durationMs: album.durationMs,
                genre: album.genre, isCompilation: album.isCompilation)
            var position: [Int: Int] = [:]
            for (at, index) in album.members.enumerated() { position[index] = at }
            return TrackGroup(
                folder: (path(tracks[album.members[0]]) as NSString).deletingLastPathComponent, heading: heading,
                summary: GroupSummary(states: album.members.map { state(tracks[$0]) }), tracks: album.members.map { tracks[$0] },
                discs: album.discs.map { DiscSection(number: $0.number, members: $0.members.compactMap { position[$0] }) })
        }
        return (groups, ungrouped)
    }

    /// A group per filing artist (`AlbumGrouping.filingArtists`), tracks by album, disc, number
    /// and path; and the indices of the tracks without tags.
    private static func byArtist<Track: Sendable>(
        _ tracks: [Track], _ inputs: [AlbumGrouping.Track], path: (Track) -> String, state: (Track) -> UploadState
    ) -> (groups: [TrackGroup<Track>], untagged: [Int]) {
        var byArtist: [String: [Int]] = [:]
        var untagged: [Int] = []
        for (index, artist) in AlbumGrouping.filingArtists(inputs).enumerated() {
            if let artist { byArtist[artist, default: []].append(index) } else { untagged.append(index) }
        }
        var groups: [TrackGroup<Track>] = []
        for (artist, indices) in byArtist {
            let sorted = indices.sorted { i, j in
                let (x, y) = (inputs[i].tags, inputs[j].tags)
                if x?.album != y?.album { return (x?.album ?? "") < (y?.album ?? "") }
                if (x?.disc ?? 1) != (y?.disc ?? 1) { return (x?.disc ?? 1) < (y?.disc ?? 1) }
                if (x?.track ?? 0) != (y?.track ?? 0) { return (x?.track ?? 0) < (y?.track ?? 0) }
                return path(tracks[i]) < path(tracks[j])
            }
            groups.append(TrackGroup(
                folder: (path(tracks[sorted[0]]) as NSString).deletingLastPathComponent,
                heading: GroupHeading(by: .artist, album: nil, artist: artist),
                summary: GroupSummary(states: sorted.map { state(tracks[$0]) }), tracks: sorted.map { tracks[$0] }))
        }
        groups.sort { ($0.heading?.artist ?? "").localizedStandardCompare($1.heading?.artist ?? "") == .orderedAscending }
        return (groups, untagged)
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
