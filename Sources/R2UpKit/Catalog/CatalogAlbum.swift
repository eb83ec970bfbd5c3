import Foundation
import R2UpModel

/// An album's art in the bucket: the full image and its thumbnail, under content-addressed keys.
public struct CatalogArt: Codable, Sendable, Equatable {
    public var key: String
    public var url: String
    /// nil when no thumbnail could be made (an image r2up cannot decode): use `url`.
    public var thumbnailKey: String?
    public var thumbnailURL: String?

    package init(key: String, url: String, thumbnailKey: String? = nil, thumbnailURL: String? = nil) {
        self.key = key
        self.url = url
        self.thumbnailKey = thumbnailKey
        self.thumbnailURL = thumbnailURL
    }
}

/// One album of `index.json`: the grouping `status` uses (compilations under "Various Artists",
/// discs as sections numbered alike), with the tracks by key in album order.
public struct CatalogAlbum: Codable, Sendable, Equatable {
    public struct Disc: Codable, Sendable, Equatable {
        public var disc: Int
        /// "Disc 2".
        public var title: String
        public var tracks: [String]
    }

    public var artist: String
    public var album: String
    public var year: Int?
    public var genre: String?
    public var compilation: Bool
    /// The tracks' durations added up, in seconds.
    public var duration: Double?
    /// Keys of the tracks, in album order (disc, track number, key).
    public var tracks: [String]
    /// The discs when a track is on a disc past the first; empty otherwise.
    public var discs: [Disc]
    public var art: CatalogArt?

    /// The albums of these tracks; a track without an album tag is on "Unknown Album" of its
    /// artist. `art` is by album identity (`identity(artist:album:)`).
    static func albums(of tracks: [CatalogTrack], art: [String: CatalogArt]) -> [CatalogAlbum] {
        let inputs = tracks.map { AlbumGrouping.Track(path: $0.key, tags: $0.tags) }
        return AlbumGrouping.albums(inputs).albums.map { group in
            let durations = group.members.compactMap { tracks[$0].duration }
            return CatalogAlbum(
                artist: group.artist, album: group.album, year: group.year, genre: group.genre,
                compilation: group.isCompilation, duration: durations.isEmpty ? nil : durations.reduce(0, +),
                tracks: group.members.map { tracks[$0].key },
                discs: group.discs.map { Disc(disc: $0.number, title: $0.title, tracks: $0.members.map { tracks[$0].key }) },
                art: art[identity(artist: group.artist, album: group.album)])
        }
    }

    /// How art is matched to an album: its filing artist and title.
    static func identity(artist: String, album: String) -> String { artist + "\n" + album }
}

extension CatalogTrack {
    /// The track's tags as grouping reads them: an album always (a missing one is "Unknown Album").
    var tags: AudioTags {
        AudioTags(
            title: title, artist: artist, albumArtist: albumArtist, album: album ?? "Unknown Album", year: year,
            track: track, disc: disc, genre: genre, compilation: compilation,
            durationMs: duration.flatMap(Self.milliseconds))
    }

    /// Seconds as whole milliseconds; nil for a value no track has (index.json and object metadata
    /// are anyone's writing: 1e308 seconds is finite, but not as milliseconds in an `Int`).
    static func milliseconds(_ seconds: Double) -> Int? {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < Double(Int32.max) * 1000 else { return nil }
        return Int(milliseconds)
    }
}
