import Foundation
public import R2UpKit

extension StatusReport.Track {
    /// A row by album: "02 Knuckleheadz  4:01" ("2-01 …" past the first disc); by artist the
    /// album follows. The file name stands in for a missing title.
    func taggedName(by grouping: StatusGrouping) -> String {
        guard let tags else { return name }
        var text = ""
        if let track = tags.track {
            if let disc = tags.disc, disc > 1 { text += "\(disc)-" }
            text += KeyTemplate.padded(track, 2) + " "
        }
        text += tags.title ?? name
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

    /// Groups by album or artist where tracks carry tags; a track without (no album tag, by
    /// album) stays in its folder's group. `by` nil: by album when any track has an album
    /// tag, else by folder.
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
        struct Key: Hashable { var artist: String; var album: String? }
        var tagged: [Key: [TrackRecord]] = [:]
        var untagged: [TrackRecord] = []
        for track in tracks {
            guard let trackTags = tags[track.path], trackTags.hasTags, grouping == .artist || trackTags.album != nil else {
                untagged.append(track)
                continue
            }
            tagged[Key(artist: trackTags.filingArtist, album: grouping == .album ? trackTags.album : nil), default: []].append(track)
        }
        var groups: [Group] = []
        for (key, records) in tagged {
            let sorted = records.sorted { a, b in
                let (x, y) = (tags[a.path], tags[b.path])
                if grouping == .artist, x?.album != y?.album { return (x?.album ?? "") < (y?.album ?? "") }
                if (x?.disc ?? 1) != (y?.disc ?? 1) { return (x?.disc ?? 1) < (y?.disc ?? 1) }
                if (x?.track ?? 0) != (y?.track ?? 0) { return (x?.track ?? 0) < (y?.track ?? 0) }
                return a.path < b.path
            }
            let durations = sorted.compactMap { tags[$0.path]?.durationMs }
            let years = sorted.compactMap { tags[$0.path]?.year }
            let heading = GroupHeading(
                by: grouping, album: key.album, artist: key.artist, year: grouping == .album ? years.min() : nil,
                durationMs: durations.isEmpty ? nil : durations.reduce(0, +))
            groups.append(Group(
                folder: (sorted[0].path as NSString).deletingLastPathComponent,
                summary: GroupSummary(states: sorted.map(\.uploadState)),
                tracks: sorted.map { Track(record: $0, icon: $0.icon(isLocal: isLocal($0)), tags: tags[$0.path]) },
                heading: heading))
        }
        groups.sort { a, b in
            guard let x = a.heading, let y = b.heading else { return false }
            if x.artist != y.artist { return x.artist.localizedStandardCompare(y.artist) == .orderedAscending }
            if x.year != y.year { return (x.year ?? 0) < (y.year ?? 0) }
            return (x.album ?? "").localizedStandardCompare(y.album ?? "") == .orderedAscending
        }
        // Untagged tracks keep their folders, after the albums.
        self.init(tracks: untagged, isLocal: isLocal)
        self.groups = groups + self.groups
    }
}
