import Foundation
public import R2UpKit

/// How a terminal can draw icons: Unicode glyphs or ASCII, with or without ANSI colour.
public struct TerminalStyle: Sendable, Equatable {
    /// ASCII glyphs, for a terminal whose locale is not UTF-8.
    public var ascii: Bool
    /// ANSI colour.
    public var colour: Bool

    public init(ascii: Bool, colour: Bool) {
        self.ascii = ascii
        self.colour = colour
    }

    /// The style for this environment: colour only on a terminal and without `NO_COLOR`
    /// (set and not empty, as no-color.org says); Unicode only when the locale is UTF-8.
    public init(environment: [String: String], isTerminal: Bool) {
        ascii = !Self.localeIsUTF8(environment)
        colour = isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
    }

    /// Whether the character locale is UTF-8: the first set of LC_ALL, LC_CTYPE and LANG
    /// (POSIX order) names UTF-8; none set means the C locale, which is ASCII.
    public static func localeIsUTF8(_ environment: [String: String]) -> Bool {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let locale = locale?.lowercased() else { return false }
        return locale.contains("utf-8") || locale.contains("utf8")
    }

    /// `text` in `colour` when colour is on.
    public func paint(_ text: String, _ colour: IconColour?) -> String {
        guard self.colour, let colour, !text.isEmpty else { return text }
        return "\u{1B}[\(Self.code(colour))m\(text)\u{1B}[0m"
    }

    /// SGR codes: orange is 256-colour 208, the accent blue, secondary dim grey.
    static func code(_ colour: IconColour) -> String {
        switch colour {
        case .orange: "38;5;208"
        case .red: "31"
        case .green: "32"
        case .accent: "34"
        case .secondary: "90"
        }
    }
}

/// `r2up status`: tracks grouped by folder, each group with its aggregate upload state
/// (seed 000's group header) and each track with its one icon (DESIGN §7).
public struct StatusReport: Sendable, Equatable {
    public struct Track: Sendable, Equatable {
        public var record: TrackRecord
        public var icon: TrackIcon
        /// Its tags, when grouping by album or artist.
        public var tags: AudioTags? = nil
        /// In an album filed under "Various Artists": the row names the track's artist.
        public var inCompilation = false

        /// The file's name, without its folder: what follows the last "/" (trailing ones aside),
        /// cut from the bytes (NSString's lastPathComponent was a quarter of `status`'s CPU).
        public var name: String {
            var path = Substring(record.path)
            while path.utf8.count > 1, path.utf8.last == 0x2F { path = path.dropLast() }
            guard path.utf8.count > 1, let slash = path.utf8.lastIndex(of: 0x2F) else { return String(path) }
            return String(path[path.utf8.index(after: slash)...])
        }
    }

    public struct Group: Sendable, Equatable {
        /// The folder the tracks are in (by album or artist: the first track's).
        public var folder: String
        public var summary: GroupSummary
        public var tracks: [Track]
        /// The album or artist the group stands for; nil for a folder group.
        public var heading: GroupHeading? = nil
        /// An album's discs, in `tracks` order, when it has more than one; empty otherwise.
        public var discs: [Disc] = []
    }

    /// A section of an album's tracks: `count` tracks from where the previous section ends.
    public struct Disc: Sendable, Equatable {
        public var number: Int
        /// "Disc 2", as the catalog names it.
        public var title: String
        public var count: Int
    }

    /// Groups ordered by folder, tracks by path.
    public var groups: [Group]

    /// Groups `tracks` by their parent folder.
    /// - Parameters:
    ///   - tracks: the tracks, in any order.
    ///   - isLocal: whether a track's file is on this machine (a missing file with a cloud
    ///     copy shows as cloud only).
    public init(tracks: [TrackRecord], isLocal: (TrackRecord) -> Bool = { _ in true }) {
        var groups: [Group] = []
        Self.forEachFolderGroup(tracks, isLocal: isLocal) { groups.append($0) }
        self.groups = groups
    }

    /// Hands `body` the folder groups of `tracks` one at a time, folders and tracks in byte
    /// order of path (the store's and the scanner's order): `status DIR` over 100,000 files
    /// holds the tracks once, not again as groups and lines.
    public static func forEachFolderGroup<Tracks: RandomAccessCollection<TrackRecord>, E: Error>(
        _ tracks: Tracks, isLocal: (TrackRecord) -> Bool, _ body: (Group) throws(E) -> Void
    ) throws(E) where Tracks.Index == Int {
        // A path's folder is what comes before its last "/": an index sorted by (folder, path).
        let order: [Int]
        let folder: (Int) -> Substring
        if let scanned = tracks as? ScannedTracks {
            (order, folder) = scanned.folderOrder()
        } else {
            let paths = tracks.map(\.path)
            let cuts: [String.Index] = paths.map { $0.utf8.lastIndex(of: 0x2F) ?? $0.startIndex }
            folder = { paths[$0][..<cuts[$0]] }
            order = paths.indices.sorted { i, j in
                let (x, y) = (folder(i).utf8, folder(j).utf8)
                if !x.elementsEqual(y) { return x.lexicographicallyPrecedes(y) }
                return paths[i].utf8.lexicographicallyPrecedes(paths[j].utf8)
            }
        }
        var start = 0
        while start < order.count {
            let name = folder(order[start])
            var end = start + 1
            while end < order.count, folder(order[end]).utf8.elementsEqual(name.utf8) { end += 1 }
            let records = order[start..<end].map { tracks[tracks.startIndex + $0] }
            try body(
                Group(
                    folder: name.isEmpty ? "/" : String(name), summary: GroupSummary(states: records.map(\.uploadState)),
                    tracks: records.map { Track(record: $0, icon: $0.icon(isLocal: isLocal($0))) }))
            start = end
        }
    }

    public var isEmpty: Bool { groups.isEmpty }

    /// The report for people:
    /// ```
    /// /music/Wu-Tang Clan/1995 Only Built 4 Cuban Linx  (3)  ↑ 1/3
    ///   ↑ 01 Striving for Perfection.flac
    ///   ⚠ 02 Knuckleheadz.flac: SignatureDoesNotMatch
    ///     03 Knowledge God.flac
    /// ```
    /// A group line is the folder, the track count in parentheses and the summary label
    /// (nothing when no track has an upload state); a track line is two spaces, the icon
    /// (a blank for a local-only track), a space and the name, and for a failed track
    /// its last error after a colon.
    public func lines(style: TerminalStyle) -> [String] {
        groups.flatMap { Self.lines(of: $0, style: style) }
    }

    /// One group's lines, as `lines(style:)` draws them.
    public static func lines(of group: Group, style: TerminalStyle) -> [String] {
        var lines: [String] = []
        var header = "\(TextColumns.printable(group.heading?.title ?? group.folder))  (\(group.tracks.count))"
        let label = group.summary.label(ascii: style.ascii)
        if !label.isEmpty { header += "  " + style.paint(label, group.summary.colour) }
        lines.append(header)
        // Section lines before the first track of each disc.
        var sections: [Int: String] = [:]
        var start = 0
        for disc in group.discs {
            sections[start] = "  " + disc.title
            start += disc.count
        }
        for (index, track) in group.tracks.enumerated() {
            if let section = sections[index] { lines.append(section) }
            let glyph = track.icon.glyph(ascii: style.ascii, colour: style.colour)
            var line = "  " + (glyph.map { style.paint($0, track.icon.colour) } ?? " ") + " "
            line += TextColumns.printable(group.heading.map { track.taggedName(by: $0.by) } ?? track.name)
            if track.icon == .uploadError || track.icon == .downloadError,
                let error = track.record.lastError, !error.isEmpty
            {
                // The line already names the track: its path is not said twice.
                let path = track.record.path + ": "
                line += ": " + TextColumns.printable(error.hasPrefix(path) ? String(error.dropFirst(path.count)) : error)
            } else if track.record.interrupted {
                line += " (interrupted, resumes on the next run)"
            } else if let key = track.record.pendingCopyKey {
                line += " (its copy to \(TextColumns.printable(key)) is not made yet, resumes on the next run)"
            } else if track.record.changedSinceUpload {
                line += " (changed since upload)"
            }
            lines.append(line)
        }
        return lines
    }
}

extension StatusReport: Encodable {
    /// `status --json`: `[{folder, summary: {name, uploaded, total, errors, uploading},
    /// tracks: [{path, icon, uploadState, downloadState, key, etag, lastError, interrupted,
    /// pendingCopyKey, changedSinceUpload}]}]`,
    /// with null for what is unknown rather than a missing key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(groups)
    }
}

extension StatusReport.Group: Encodable {
    private enum CodingKeys: String, CodingKey {
        case folder, summary, tracks, by, album, artist, year, duration, genre, compilation, discs
    }
    private enum DiscKeys: String, CodingKey { case disc, title, tracks }
    private enum SummaryKeys: String, CodingKey { case name, uploaded, total, errors, uploading }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(folder, forKey: .folder)
        var summary = container.nestedContainer(keyedBy: SummaryKeys.self, forKey: .summary)
        try summary.encode(self.summary.name, forKey: .name)
        try summary.encode(self.summary.uploaded, forKey: .uploaded)
        try summary.encode(self.summary.total, forKey: .total)
        try summary.encode(self.summary.errors, forKey: .errors)
        try summary.encode(self.summary.uploading, forKey: .uploading)
        try container.encode(tracks, forKey: .tracks)
        if let heading {
            try container.encode(heading.by.rawValue, forKey: .by)
            try container.encode(heading.album, forKey: .album)
            try container.encode(heading.artist, forKey: .artist)
            try container.encode(heading.year, forKey: .year)
            try container.encode(heading.durationMs.map { Double($0) / 1000 }, forKey: .duration)
            try container.encode(heading.genre, forKey: .genre)
            try container.encode(heading.isCompilation, forKey: .compilation)
            var discs = container.nestedUnkeyedContainer(forKey: .discs)
            for disc in self.discs {
                var entry = discs.nestedContainer(keyedBy: DiscKeys.self)
                try entry.encode(disc.number, forKey: .disc)
                try entry.encode(disc.title, forKey: .title)
                try entry.encode(disc.count, forKey: .tracks)
            }
        }
    }
}

extension StatusReport.Track: Encodable {
    private enum CodingKeys: String, CodingKey {
        case path, icon, uploadState, downloadState, key, etag, lastError, interrupted, pendingCopyKey, changedSinceUpload
        case title, artist, album, track, disc, year, duration, albumArtist, genre, compilation
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record.path, forKey: .path)
        try container.encode(icon.name, forKey: .icon)
        try container.encode(record.uploadState, forKey: .uploadState)
        try container.encode(record.downloadState, forKey: .downloadState)
        try container.encode(record.key, forKey: .key)
        try container.encode(record.etag, forKey: .etag)
        try container.encode(record.lastError, forKey: .lastError)
        try container.encode(record.interrupted, forKey: .interrupted)
        try container.encode(record.pendingCopyKey, forKey: .pendingCopyKey)
        try container.encode(record.changedSinceUpload, forKey: .changedSinceUpload)
        if let tags {
            try container.encode(tags.title, forKey: .title)
            try container.encode(tags.artist, forKey: .artist)
            try container.encode(tags.album, forKey: .album)
            try container.encode(tags.track, forKey: .track)
            try container.encode(tags.disc, forKey: .disc)
            try container.encode(tags.year, forKey: .year)
            try container.encode(tags.durationMs.map { Double($0) / 1000 }, forKey: .duration)
            try container.encode(tags.albumArtist, forKey: .albumArtist)
            try container.encode(tags.genre, forKey: .genre)
            try container.encode(tags.compilation == true, forKey: .compilation)
        }
    }
}

/// The line `status` ends with: how many tracks, by state, most urgent first.
/// "42 tracks: 2 uploading, 1 interrupted, 30 uploaded, 9 local only"
public struct StatusTotals: Sendable, Equatable {
    public private(set) var tracks = 0
    public private(set) var interrupted = 0
    public private(set) var byIcon: [TrackIcon: Int] = [:]

    public init() {}

    public mutating func add(_ track: TrackRecord) {
        tracks += 1
        if track.interrupted { interrupted += 1 }
        byIcon[track.icon(isLocal: track.isOnDisk), default: 0] += 1
    }

    public var line: String {
        var parts: [String] = []
        for icon in TrackIcon.allCases.sorted() {
            guard let count = byIcon[icon], count > 0 else { continue }
            let words: String =
                switch icon {
                case .uploading: "uploading"
                case .uploadError: count == 1 ? "upload error" : "upload errors"
                case .downloading: "downloading"
                case .downloadError: count == 1 ? "download error" : "download errors"
                case .downloaded: "downloaded"
                case .uploaded: "uploaded"
                case .cloudOnly: "cloud only"
                case .localOnly: "not uploaded"
                }
            parts.append("\(count) \(words)")
            // Interrupted tracks show as not uploaded: said beside them.
            if icon == .localOnly && interrupted > 0 { parts.append("\(interrupted) of them interrupted") }
        }
        return "\(tracks) \(tracks == 1 ? "track" : "tracks")" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
    }
}
