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

    public init(by: StatusGrouping, album: String?, artist: String, year: Int? = nil, durationMs: Int? = nil) {
        self.by = by
        self.album = album
        self.artist = artist
        self.year = year
        self.durationMs = durationMs
    }

    /// The group line's name: seed 000's "Only Built 4 Cuban Linx... (1995)", then the artist
    /// and the total duration; by artist, the artist.
    public var title: String {
        guard by == .album, let album else { return artist }
        var text = album
        if let year { text += " (\(year))" }
        text += " — " + artist
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
