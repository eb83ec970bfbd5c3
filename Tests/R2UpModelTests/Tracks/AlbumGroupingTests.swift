import Testing
@testable import R2UpModel

@Suite("Albums: compilations under Various Artists, discs as sections")
struct AlbumGroupingTests {
    typealias Track = AlbumGrouping.Track

    static func tags(_ title: String, _ artist: String?, album: String?, albumArtist: String? = nil, disc: Int? = nil,
                     track: Int? = nil, year: Int? = nil, genre: String? = nil, compilation: Bool? = nil) -> AudioTags {
        AudioTags(title: title, artist: artist, albumArtist: albumArtist, album: album, year: year, track: track, disc: disc,
                  genre: genre, compilation: compilation, durationMs: 1_000)
    }

    @Test("one folder, one album title, several artists and no album artist: a compilation")
    func folderRule() {
        let tracks = [
            Track(path: "/m/Hits/01.mp3", tags: Self.tags("A", "Ann", album: "Hits", track: 1)),
            Track(path: "/m/Hits/02.mp3", tags: Self.tags("B", "Bob", album: "Hits", track: 2)),
            // The same title in another folder, by one artist: not a compilation.
            Track(path: "/m/Other/01.mp3", tags: Self.tags("C", "Cy", album: "Hits", track: 1)),
            // An album artist set: filed under it, never Various Artists.
            Track(path: "/m/Mix/01.mp3", tags: Self.tags("D", "Dee", album: "Mix", albumArtist: "DJ X")),
            Track(path: "/m/Mix/02.mp3", tags: Self.tags("E", "Eve", album: "Mix", albumArtist: "DJ X")),
        ]
        #expect(AlbumGrouping.compilations(tracks) == [true, true, false, false, false])
        #expect(AlbumGrouping.filingArtists(tracks) == ["Various Artists", "Various Artists", "Cy", "DJ X", "DJ X"])
        let (albums, ungrouped) = AlbumGrouping.albums(tracks)
        #expect(ungrouped == [])
        #expect(albums.map { "\($0.artist)|\($0.album)|\($0.isCompilation)|\($0.members)" }
            == ["Cy|Hits|false|[2]", "DJ X|Mix|false|[3, 4]", "Various Artists|Hits|true|[0, 1]"])
    }

    @Test("the compilation flag files a track under Various Artists, across folders")
    func flag() {
        let tracks = [
            Track(path: "/m/Now/CD2/01.m4a", tags: Self.tags("B", "Bob", album: "Now 1", albumArtist: "Bob", disc: 2, track: 1, compilation: true)),
            Track(path: "/m/Now/CD1/01.m4a", tags: Self.tags("A", "Ann", album: "Now 1", disc: 1, track: 1, compilation: true)),
            Track(path: "/m/Now/CD1/02.m4a", tags: Self.tags("A2", "Ann", album: "Now 1", disc: 1, track: 2, compilation: true)),
        ]
        let (albums, _) = AlbumGrouping.albums(tracks)
        #expect(albums.count == 1)
        #expect(albums.first?.artist == "Various Artists" && albums.first?.isCompilation == true)
        #expect(albums.first?.members == [1, 2, 0])
        #expect(albums.first?.discs.map { "\($0.title):\($0.members)" } == ["Disc 1:[1, 2]", "Disc 2:[0]"])
    }

    @Test("discs: sections only past the first disc; no disc number counts as disc 1")
    func discs() {
        let one = [
            Track(path: "a/1.flac", tags: Self.tags("x", "A", album: "L", disc: 1, track: 2)),
            Track(path: "a/2.flac", tags: Self.tags("y", "A", album: "L", track: 1)),
        ]
        #expect(AlbumGrouping.albums(one).albums.first?.discs == [])
        #expect(AlbumGrouping.albums(one).albums.first?.members == [1, 0])
        let live = [
            Track(path: "live/3.flac", tags: Self.tags("c", "A", album: "Live", disc: 2, track: 1, year: 2001)),
            Track(path: "live/1.flac", tags: Self.tags("a", "A", album: "Live", track: 1, year: 1999)),
            Track(path: "live/2.flac", tags: Self.tags("b", "A", album: "Live", disc: 1, track: 2)),
        ]
        let album = AlbumGrouping.albums(live).albums.first
        #expect(album?.discs == [DiscSection(number: 1, members: [1, 2]), DiscSection(number: 2, members: [0])])
        #expect(album?.year == 1999 && album?.durationMs == 3_000)
    }

    @Test("untagged tracks and tracks without an album stay out; albums sort by artist, year, title")
    func orderAndUngrouped() {
        let tracks = [
            Track(path: "z/1.mp3", tags: nil),
            Track(path: "b/1.mp3", tags: Self.tags("t", "Björk", album: "Post", year: 1995)),
            Track(path: "b/2.mp3", tags: Self.tags("t", "Björk", album: "Début", year: 1993)),
            Track(path: "s/1.mp3", tags: Self.tags("single", "Ann", album: nil)),
            Track(path: "a/1.mp3", tags: Self.tags("t", "abba", album: "Gold")),
        ]
        let (albums, ungrouped) = AlbumGrouping.albums(tracks)
        #expect(albums.map(\.album) == ["Gold", "Début", "Post"])
        #expect(ungrouped == [0, 3])
        #expect(AlbumGrouping.filingArtists(tracks) == [nil, "Björk", "Björk", "Ann", "abba"])
    }

    @Test("genre: the commonest of the album's tracks, the first on a tie")
    func genre() {
        let tracks = [
            Track(path: "g/1.ogg", tags: Self.tags("a", "A", album: "G", track: 1, genre: "Jazz")),
            Track(path: "g/2.ogg", tags: Self.tags("b", "A", album: "G", track: 2, genre: "Rock")),
            Track(path: "g/3.ogg", tags: Self.tags("c", "A", album: "G", track: 3, genre: "Rock")),
        ]
        #expect(AlbumGrouping.albums(tracks).albums.first?.genre == "Rock")
        #expect(AlbumGrouping.albums(Array(tracks.prefix(2))).albums.first?.genre == "Jazz")
        #expect(AlbumGrouping.albums(Array(tracks.prefix(2))).albums.first?.durationMs == 2_000)
    }
}
