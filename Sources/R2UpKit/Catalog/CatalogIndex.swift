import Foundation
import R2UpModel
import R2UpStore

/// `index.json`: every track in the bucket (under the prefix), for apps and for `index.html`;
/// ``R2UpSession/catalogIndex(prefix:)`` reads a published one.
/// The schema is versioned (`version`); README documents it. Tracks are sorted by key and the
/// JSON keys sorted, so the same bucket gives the same bytes (and ETag) every time.
public struct CatalogIndex: Codable, Sendable, Equatable {
    public static let schema = "r2up-catalog"
    public static let currentVersion = 1
    /// The index's object name under its prefix: `index.json`.
    public static let fileName = CatalogPublisher.jsonName

    /// Always `r2up-catalog`: the file is r2up's.
    public var schema = CatalogIndex.schema
    public var version = CatalogIndex.currentVersion
    public var bucket: String
    public var prefix: String
    public var tracks: [CatalogTrack]
    /// The tracks as albums (`AlbumGrouping`, as `status` groups them), in display order.
    public var albums: [CatalogAlbum]

    package init(bucket: String, prefix: String, tracks: [CatalogTrack], art: [String: CatalogArt] = [:]) {
        self.bucket = bucket
        self.prefix = prefix
        self.tracks = tracks
        albums = CatalogAlbum.albums(of: tracks, art: art)
    }

    /// The bytes of `index.json`.
    package func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data("{}".utf8))
    }
}

/// One track of the catalog; tags come from the object's `x-amz-meta-*`.
public struct CatalogTrack: Codable, Sendable, Equatable {
    public var key: String
    public var url: String
    public var size: Int64
    public var etag: String
    public var contentType: String?
    /// When the object was uploaded (its Last-Modified), ISO 8601 UTC.
    public var uploaded: String?
    public var title: String
    public var artist: String?
    public var albumArtist: String?
    public var album: String?
    public var year: Int?
    public var track: Int?
    public var disc: Int?
    public var genre: String?
    /// Set (true) when the object carries the compilation flag; left out otherwise.
    public var compilation: Bool?
    public var duration: Double?

    /// A track from what the listing and a HEAD told; a missing title falls back to the key's file name.
    init(key: String, url: String, details: CatalogObject) {
        self.key = key
        self.url = url
        size = details.size
        etag = details.etag
        contentType = details.contentType
        uploaded = details.lastModified.map(Self.iso8601)
        let meta = details.metadata
        func text(_ name: String) -> String? { meta[name].flatMap { AudioTags.clean($0) } }
        func number(_ name: String) -> Int? { meta[name].flatMap { Int(AudioTags.trimmingWhitespace($0)) }.flatMap { $0 > 0 ? $0 : nil } }
        let name = key.split(separator: "/").last.map(String.init) ?? key
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        title = text("title") ?? (stem.isEmpty ? name : stem)
        artist = text("artist")
        albumArtist = text("albumartist")
        album = text("album")
        year = number("year")
        track = number("track")
        disc = number("disc")
        genre = text("genre")
        compilation = meta["compilation"].map(AudioTags.trimmingWhitespace) == "1" ? true : nil
        duration = meta["duration"].flatMap { Double($0) }.flatMap { $0.isFinite && $0 >= 0 && $0 <= Self.longestDuration ? $0 : nil }
    }

    /// Anyone may write an object's metadata: a "duration" beyond this (about 116 days) is no
    /// recording's, and an album's sum of such values would not survive JSON.
    static let longestDuration: Double = 10_000_000

    static func iso8601(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
