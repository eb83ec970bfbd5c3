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
        TrackGroups.grouping(by, tags: tags)
    }

    /// Groups by album or artist where tracks carry tags, by `TrackGroups`' one rule (the one
    /// `serve` shows); a track without (no album tag, by album) stays in its folder's group.
    /// `by` nil: by album when any track has an album tag, else by folder.
    public init(
        tracks: [TrackRecord], tags: [String: AudioTags], by grouping: StatusGrouping?,
        isLocal: (TrackRecord) -> Bool = { _ in true }
    ) {
        let grouping = Self.grouping(grouping, tags: tags)
        guard grouping != .folder else {
            self.init(tracks: tracks, isLocal: isLocal)
            return
        }
        let tags = tags.filter { $0.value.hasTags }
        let groups = TrackGroups.make(tracks, path: \.path, state: \.uploadState, tags: tags, by: grouping).map { group in
            // A folder group's rows are file names; an album's and an artist's show their tags.
            let heading = group.heading
            let compilation = heading?.isCompilation ?? false
            return Group(
                folder: group.folder, summary: group.summary,
                tracks: group.tracks.map { record in
                    Track(
                        record: record, icon: record.icon(isLocal: isLocal(record)), tags: heading == nil ? nil : tags[record.path],
                        inCompilation: compilation)
                },
                heading: heading,
                discs: group.discs.map { Disc(number: $0.number, title: $0.title, count: $0.members.count) })
        }
        self.init(groups: groups)
    }

    init(groups: [Group]) {
        self.groups = groups
    }
}
