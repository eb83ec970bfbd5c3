import Foundation

/// How `status` groups tracks (`--by`).
public enum StatusGrouping: String, Sendable, CaseIterable {
    case folder, album, artist
}

/// What an album or artist group stands for.
public struct GroupHeading: Sendable, Equatable {
    public var by: StatusGrouping
    public var album: String?
    public var artist: String
    public var year: Int?
    /// The tracks' durations added up, when any is known.
    public var durationMs: Int?
    public var genre: String?
    /// An album filed under "Various Artists".
    public var isCompilation: Bool

    public init(
        by: StatusGrouping, album: String?, artist: String, year: Int? = nil, durationMs: Int? = nil,
        genre: String? = nil, isCompilation: Bool = false
    ) {
        self.by = by
        self.album = album
        self.artist = artist
        self.year = year
        self.durationMs = durationMs
        self.genre = genre
        self.isCompilation = isCompilation
    }

    /// The group line's name: seed 000's "Only Built 4 Cuban Linx... (1995)", then the artist,
    /// the genre and the total duration; by artist, the artist.
    public var title: String {
        guard by == .album, let album else { return artist }
        var text = album
        if let year { text += " (\(year))" }
        text += " — " + artist
        if let genre { text += " · " + genre }
        if let durationMs { text += " · " + AudioTags.durationText(milliseconds: durationMs) }
        return text
    }
}

extension AudioTags {
    /// "4:01", "1:02:03".
    public static func durationText(milliseconds: Int) -> String {
        let seconds = (milliseconds + 500) / 1000
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// The artist a track is filed under: album artist, artist, "Unknown Artist".
    public var filingArtist: String { albumArtist ?? artist ?? "Unknown Artist" }
}

extension AudioTags {
    /// The artist a compilation is filed under.
    public static let variousArtists = "Various Artists"
}

/// One disc of an album with more than one: its number and title, the same in `status` and the catalog.
public struct DiscSection: Sendable, Equatable {
    public var number: Int
    /// Indices into the tracks given to `AlbumGrouping.albums`, in album order.
    public var members: [Int]
    /// "Disc 2".
    public var title: String { "Disc \(number)" }

    public init(number: Int, members: [Int]) {
        self.number = number
        self.members = members
    }
}

/// An album as r2up files it: compilations under "Various Artists", discs as sections.
public struct AlbumGroup: Sendable, Equatable {
    /// The filing artist: the album artist; "Various Artists" for a compilation; else the artist.
    public var artist: String
    public var album: String
    public var isCompilation: Bool
    /// The earliest year of its tracks.
    public var year: Int?
    /// The genre most of its tracks carry (the first in album order on a tie).
    public var genre: String?
    /// The tracks' durations added up, when any is known.
    public var durationMs: Int?
    /// Indices into the tracks given, by disc, track number, then folder and name.
    public var members: [Int]
    /// The discs, when any track is on a disc past the first; empty otherwise.
    public var discs: [DiscSection]
}

/// The pure rules `status`, the catalog, key templates and apps share to group tracks into albums.
public enum AlbumGrouping {
    /// One track: the folder it is in (a local folder, or a key's "directory") and its tags.
    public struct Track: Sendable, Equatable {
        public var folder: String
        public var name: String
        public var tags: AudioTags?

        public init(folder: String, name: String, tags: AudioTags?) {
            self.folder = folder
            self.name = name
            self.tags = tags
        }

        /// The track at a path (or key): what comes before its last "/" is the folder.
        public init(path: String, tags: AudioTags?) {
            if let slash = path.lastIndex(of: "/") {
                self.init(folder: String(path[..<slash]), name: String(path[path.index(after: slash)...]), tags: tags)
            } else {
                self.init(folder: "", name: path, tags: tags)
            }
        }
    }

    /// Whether each track belongs to a compilation: its compilation flag is set, or it has no
    /// album artist and shares its folder and album title with a track of another artist.
    public static func compilations(_ tracks: [Track]) -> [Bool] {
        struct Place: Hashable { var folder: String; var album: String }
        var artists: [Place: Set<String>] = [:]
        for track in tracks {
            guard let tags = track.tags, tags.albumArtist == nil, let album = tags.album, let artist = tags.artist else { continue }
            artists[Place(folder: track.folder, album: album), default: []].insert(artist)
        }
        return tracks.map { track in
            guard let tags = track.tags else { return false }
            if tags.compilation == true { return true }
            guard tags.albumArtist == nil, let album = tags.album else { return false }
            return (artists[Place(folder: track.folder, album: album)]?.count ?? 0) > 1
        }
    }

    /// The artist each track is filed under: "Various Artists" in a compilation, else the album
    /// artist, the artist, "Unknown Artist" (nil for a track without tags).
    public static func filingArtists(_ tracks: [Track]) -> [String?] {
        zip(tracks, compilations(tracks)).map { track, isCompilation in
            guard let tags = track.tags, tags.hasTags else { return nil }
            return isCompilation ? AudioTags.variousArtists : tags.filingArtist
        }
    }

    /// The albums of the tracks with an album tag, ordered by artist, year and title; the
    /// indices of the others (no tags or no album) in `ungrouped`, in the order given.
    public static func albums(_ tracks: [Track]) -> (albums: [AlbumGroup], ungrouped: [Int]) {
        struct Key: Hashable { var artist: String; var album: String }
        let compilation = compilations(tracks)
        var members: [Key: [Int]] = [:]
        var order: [Key] = []
        var ungrouped: [Int] = []
        for (index, track) in tracks.enumerated() {
            guard let tags = track.tags, let album = tags.album else {
                ungrouped.append(index)
                continue
            }
            let key = Key(artist: compilation[index] ? AudioTags.variousArtists : tags.filingArtist, album: album)
            if members[key] == nil { order.append(key) }
            members[key, default: []].append(index)
        }
        var albums = order.map { key -> AlbumGroup in
            let indices = sortedInAlbum(members[key] ?? [], tracks)
            let tags = indices.compactMap { tracks[$0].tags }
            let durations = tags.compactMap(\.durationMs)
            return AlbumGroup(
                artist: key.artist, album: key.album, isCompilation: indices.contains { compilation[$0] },
                year: tags.compactMap(\.year).min(), genre: commonest(tags.compactMap(\.genre)),
                durationMs: durations.isEmpty ? nil : durations.reduce(0, +), members: indices,
                discs: discSections(indices, tracks))
        }
        albums.sort(by: inDisplayOrder)
        return (albums, ungrouped)
    }

    /// Albums by artist, then year (none first), then title; names compared as Finder does.
    public static func inDisplayOrder(_ a: AlbumGroup, _ b: AlbumGroup) -> Bool {
        if a.artist != b.artist { return a.artist.localizedStandardCompare(b.artist) == .orderedAscending }
        if a.year != b.year { return (a.year ?? 0) < (b.year ?? 0) }
        return a.album.localizedStandardCompare(b.album) == .orderedAscending
    }

    /// Disc (none counts as 1), track number (none counts as 0), folder, name.
    static func sortedInAlbum(_ indices: [Int], _ tracks: [Track]) -> [Int] {
        indices.sorted { i, j in
            let (x, y) = (tracks[i], tracks[j])
            if (x.tags?.disc ?? 1) != (y.tags?.disc ?? 1) { return (x.tags?.disc ?? 1) < (y.tags?.disc ?? 1) }
            if (x.tags?.track ?? 0) != (y.tags?.track ?? 0) { return (x.tags?.track ?? 0) < (y.tags?.track ?? 0) }
            if x.folder != y.folder { return x.folder < y.folder }
            return x.name < y.name
        }
    }

    /// Sections by disc (a track without a disc number is on disc 1), only when a track is on a later disc.
    static func discSections(_ sorted: [Int], _ tracks: [Track]) -> [DiscSection] {
        guard sorted.contains(where: { (tracks[$0].tags?.disc ?? 1) > 1 }) else { return [] }
        var sections: [DiscSection] = []
        for index in sorted {
            let disc = tracks[index].tags?.disc ?? 1
            if sections.last?.number == disc {
                sections[sections.count - 1].members.append(index)
            } else {
                sections.append(DiscSection(number: disc, members: [index]))
            }
        }
        return sections
    }

    /// The value given most often; the first given on a tie.
    static func commonest(_ values: [String]) -> String? {
        var counts: [String: Int] = [:]
        for value in values { counts[value, default: 0] += 1 }
        return values.max { counts[$0, default: 0] < counts[$1, default: 0] }.flatMap { best in
            values.first { counts[$0] == counts[best] }
        }
    }
}
