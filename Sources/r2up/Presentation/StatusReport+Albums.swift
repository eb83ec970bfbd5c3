import Foundation
public import R2UpKit

extension StatusReport.Track {
    /// A row by album: "02 Knuckleheadz  4:01" (under its disc's section), with the track's
    /// artist in a compilation ("02 Title — Artist"); by artist the disc ("2-01 …" past the
    /// first) and the album follow. The file name stands in for a missing title.
    func taggedName(by grouping: StatusGrouping) -> String {
        guard let tags else { return name }
        var text = ""
        if let track = tags.track {
            if grouping == .artist, let disc = tags.disc, disc > 1 { text += "\(disc)-" }
            text += KeyTemplate.padded(track, 2) + " "
        }
        text += tags.title ?? name
        if inCompilation, let artist = tags.artist { text += " — " + artist }
        if let duration = tags.durationMs { text += "  " + AudioTags.durationText(milliseconds: duration) }
        if grouping == .artist, let album = tags.album { text += "  (\(album))" }
        return text
    }
}

extension StatusReport {
    /// The grouping `by` stands for: nil is by album when any track has an album tag, else by folder.
    public static func grouping(_ by: StatusGrouping?, tags: [String: AudioTags]) -> StatusGrouping {
        by ?? (tags.values.contains { $0.album != nil } ? .album : .folder)
    }

    /// Groups by album or artist where tracks carry tags (`AlbumGrouping`: compilations under
    /// "Various Artists", discs as sections); a track without (no album tag, by album) stays in
    /// its folder's group. `by` nil: by album when any track has an album tag, else by folder.
    public init(
        tracks: [TrackRecord], tags: [String: AudioTags], by grouping: StatusGrouping?,
        isLocal: (TrackRecord) -> Bool = { _ in true }
    ) {
        let grouping = Self.grouping(grouping, tags: tags)
        let tags = tags.filter { $0.value.hasTags }
        guard grouping != .folder else {
            self.init(tracks: tracks, isLocal: isLocal)
            return
        }
        let inputs = tracks.map { AlbumGrouping.Track(path: $0.path, tags: tags[$0.path]) }
        func track(_ index: Int, compilation: Bool = false) -> Track {
            let record = tracks[index]
            return Track(record: record, icon: record.icon(isLocal: isLocal(record)), tags: tags[record.path], inCompilation: compilation)
        }
        var groups: [Group] = []
        var untagged: [TrackRecord] = []
        if grouping == .album {
            let (albums, ungrouped) = AlbumGrouping.albums(inputs)
            untagged = ungrouped.map { tracks[$0] }
            for album in albums {
                let heading = GroupHeading(
                    by: .album, album: album.album, artist: album.artist, year: album.year, durationMs: album.durationMs,
                    genre: album.genre, isCompilation: album.isCompilation)
                groups.append(Group(
                    folder: (tracks[album.members[0]].path as NSString).deletingLastPathComponent,
                    summary: GroupSummary(states: album.members.map { tracks[$0].uploadState }),
                    tracks: album.members.map { track($0, compilation: album.isCompilation) }, heading: heading,
                    discs: album.discs.map { Disc(number: $0.number, title: $0.title, count: $0.members.count) }))
            }
        } else {
            var byArtist: [String: [Int]] = [:]
            for (index, artist) in AlbumGrouping.filingArtists(inputs).enumerated() {
                if let artist { byArtist[artist, default: []].append(index) } else { untagged.append(tracks[index]) }
            }
            for (artist, indices) in byArtist {
                let sorted = indices.sorted { i, j in
                    let (x, y) = (inputs[i].tags, inputs[j].tags)
                    if x?.album != y?.album { return (x?.album ?? "") < (y?.album ?? "") }
                    if (x?.disc ?? 1) != (y?.disc ?? 1) { return (x?.disc ?? 1) < (y?.disc ?? 1) }
                    if (x?.track ?? 0) != (y?.track ?? 0) { return (x?.track ?? 0) < (y?.track ?? 0) }
                    return tracks[i].path < tracks[j].path
                }
                groups.append(Group(
                    folder: (tracks[sorted[0]].path as NSString).deletingLastPathComponent,
                    summary: GroupSummary(states: sorted.map { tracks[$0].uploadState }),
                    tracks: sorted.map { track($0) }, heading: GroupHeading(by: .artist, album: nil, artist: artist)))
            }
            groups.sort { ($0.heading?.artist ?? "").localizedStandardCompare($1.heading?.artist ?? "") == .orderedAscending }
        }
        // Untagged tracks keep their folders, after the albums.
        self.init(tracks: untagged, isLocal: isLocal)
        self.groups = groups + self.groups
    }
}
