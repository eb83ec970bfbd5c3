import Foundation

/// What a track's tags and audio stream say (DESIGN §12). Every field is optional: a file
/// with no tags, or broken ones, still uploads, and falls back to its path where a name is needed.
public struct AudioTags: Sendable, Equatable, Codable {
    public var title: String?
    public var artist: String?
    public var albumArtist: String?
    public var album: String?
    public var year: Int?
    public var track: Int?
    public var disc: Int?
    public var genre: String?
    /// The compilation flag (ID3 TCMP, MP4 cpil, Vorbis COMPILATION): true when set, nil otherwise.
    public var compilation: Bool?
    public var durationMs: Int?
    public var bitrateKbps: Int?
    public var sampleRate: Int?
    public var channels: Int?

    public init(
        title: String? = nil, artist: String? = nil, albumArtist: String? = nil, album: String? = nil,
        year: Int? = nil, track: Int? = nil, disc: Int? = nil, genre: String? = nil, compilation: Bool? = nil,
        durationMs: Int? = nil, bitrateKbps: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil
    ) {
        self.title = title
        self.artist = artist
        self.albumArtist = albumArtist
        self.album = album
        self.year = year
        self.track = track
        self.disc = disc
        self.genre = genre
        self.compilation = compilation
        self.durationMs = durationMs
        self.bitrateKbps = bitrateKbps
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Whether any tag (not just audio properties) was found.
    public var hasTags: Bool {
        title != nil || artist != nil || albumArtist != nil || album != nil || year != nil || track != nil || disc != nil
            || genre != nil || compilation != nil
    }

    /// The longest a stored text tag may be, in UTF-8 bytes: longer ones are cut at a character
    /// boundary (a 10 KB title would otherwise crowd out every other tag in R2's 8 KiB of metadata).
    public static let maximumValueBytes = 1_024

    /// A tag value as r2up keeps it: control characters become spaces, runs of white space
    /// are trimmed at the ends, at most `maximumValueBytes`; nil when nothing is left.
    public static func clean(_ raw: String?) -> String? {
        guard let raw else { return nil }
        // Most tags are printable ASCII with no space at an end: nothing to replace or trim.
        let utf8 = raw.utf8
        if utf8.count <= maximumValueBytes, let first = utf8.first, let last = utf8.last, first != 0x20, last != 0x20,
            utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        {
            return raw
        }
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars {
            let isControl = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029
            scalars.append(isControl ? " " : scalar)
        }
        var text = trimmingWhitespace(String(scalars))
        text = truncated(text, toBytes: maximumValueBytes)
        return text.isEmpty ? nil : text
    }

    /// Whether Foundation's `CharacterSet.whitespaces` holds this scalar (CoreFoundation's list:
    /// tab and the space separators, U+200B included), without Foundation's slow NSString path.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// `text.trimmingCharacters(in: .whitespaces)`, the same result, faster.
    package static func trimmingWhitespace(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isWhitespace($0) }),
            let end = scalars.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        if start == scalars.startIndex && scalars.index(after: end) == scalars.endIndex { return text }
        return String(scalars[start...end])
    }

    /// The longest prefix of whole characters that fits in `bytes` UTF-8 bytes.
    static func truncated(_ text: String, toBytes bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > bytes { break }
            used += size
            kept.append(character)
        }
        return kept
    }

    /// The year of a date tag: "1995", "1995-08-01", "1995/08"; nil otherwise.
    package static func year(fromDate date: String?) -> Int? {
        guard let date else { return nil }
        let digits = date.prefix { $0.isASCII && $0.isNumber }
        guard digits.count == 4, let year = Int(digits), year > 0 else { return nil }
        return year
    }
}
