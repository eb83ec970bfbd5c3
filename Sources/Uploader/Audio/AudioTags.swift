import CAudioTags
import Foundation
import Synchronization

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
    public var durationMs: Int?
    public var bitrateKbps: Int?
    public var sampleRate: Int?
    public var channels: Int?

    public init(
        title: String? = nil, artist: String? = nil, albumArtist: String? = nil, album: String? = nil,
        year: Int? = nil, track: Int? = nil, disc: Int? = nil, durationMs: Int? = nil,
        bitrateKbps: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil
    ) {
        self.title = title
        self.artist = artist
        self.albumArtist = albumArtist
        self.album = album
        self.year = year
        self.track = track
        self.disc = disc
        self.durationMs = durationMs
        self.bitrateKbps = bitrateKbps
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Whether any tag (not just audio properties) was found.
    public var hasTags: Bool {
        title != nil || artist != nil || albumArtist != nil || album != nil || year != nil || track != nil || disc != nil
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
    static func trimmingWhitespace(_ text: String) -> String {
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
    static func year(fromDate date: String?) -> Int? {
        guard let date else { return nil }
        let digits = date.prefix { $0.isASCII && $0.isNumber }
        guard digits.count == 4, let year = Int(digits), year > 0 else { return nil }
        return year
    }
}

/// Reads tags with TagLib (Debian libtag1-dev) through the CAudioTags shim.
public enum AudioTagReader {
    /// The file types whose tags are read, by lower-cased extension.
    public static let extensions: Set<String> = [
        "m4a", "m4b", "mp4", "mp3", "flac", "ogg", "oga", "opus", "wav", "aif", "aiff", "aifc",
    ]

    /// TagLib 1.13 shares caches (its string lists, the file-type resolvers) without locks:
    /// every call goes through this one lock. It is never taken on the transfer thread.
    private static let lock = Mutex(())

    /// Whether r2up reads tags of a file with this name.
    public static func isAudio(_ path: String) -> Bool {
        let name = FilePath.name(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The file's tags and audio properties, or nil when it is not an audio type r2up reads or
    /// its first bytes are no audio container (`AudioContainer`) or TagLib cannot open it (truncated,
    /// corrupt, unreadable): the caller falls back to the path.
    public static func read(path: String) -> AudioTags? {
        guard isAudio(path) else { return nil }
        // TagLib opens by path and would wait forever on a FIFO: regular files only.
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        // Not audio inside (noise, a renamed archive): TagLib's fallback would scan it all.
        guard AudioContainer.recognizes(fileAt: path) else { return nil }
        return lock.withLock { _ -> AudioTags? in
            var raw = r2up_audiotags()
            guard r2up_audiotags_read(path, &raw) == 0 else { return nil }
            defer { r2up_audiotags_free(&raw) }
            func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
                pointer.flatMap { AudioTags.clean(String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self)) }
            }
            func positive(_ value: Int32) -> Int? { value > 0 ? Int(value) : nil }
            return AudioTags(
                title: text(raw.title), artist: text(raw.artist), albumArtist: text(raw.albumartist),
                album: text(raw.album), year: AudioTags.year(fromDate: text(raw.date)),
                track: positive(raw.track), disc: positive(raw.disc),
                durationMs: raw.has_audio != 0 ? positive(raw.duration_ms) : nil,
                bitrateKbps: positive(raw.bitrate_kbps), sampleRate: positive(raw.sample_rate),
                channels: positive(raw.channels))
        }
    }
}
