import Testing
@testable import R2UpModel

@Suite("Key templates: compilations and the files beside an album's tracks")
struct KeyTemplateAlbumTests {
    @Test("a compilation's {albumartist} is Various Artists; {artist} stays the track's")
    func compilation() throws {
        let template = try KeyTemplate("{albumartist}/{album}/{track:02} {artist} - {title}.{ext}")
        let tags = AudioTags(title: "Song", artist: "Ann", album: "Hits", track: 3)
        #expect(template.key(tags: KeyTemplate.filing(tags, isCompilation: true), relativePath: "Hits/03.mp3")
            == "Various Artists/Hits/03 Ann - Song.mp3")
        #expect(template.key(tags: KeyTemplate.filing(tags, isCompilation: false), relativePath: "Hits/03.mp3")
            == "Ann/Hits/03 Ann - Song.mp3")
        #expect(KeyTemplate.filing(nil, isCompilation: true) == nil)
    }

    @Test("the tracks' directory: the one most keys share, the first on a tie, nil without one")
    func directory() {
        #expect(KeyTemplate.trackDirectory(["A/X/1.mp3", "A/Y/2.mp3", "A/Y/3.mp3"]) == "A/Y")
        #expect(KeyTemplate.trackDirectory(["A/X/1.mp3", "A/Y/2.mp3"]) == "A/X")
        #expect(KeyTemplate.trackDirectory(["1.mp3"]) == nil)
        #expect(KeyTemplate.trackDirectory([]) == nil)
    }

    @Test("cover art and other files keep their path below the album folder, beside its tracks")
    func beside() {
        #expect(KeyTemplate.besideTracks(relativePath: "Low/cover.jpg", folder: "Low", directory: "Ann/Low (2008)")
            == "Ann/Low (2008)/cover.jpg")
        #expect(KeyTemplate.besideTracks(relativePath: "Low/Scans/back.jpg", folder: "Low", directory: "Ann/Low (2008)")
            == "Ann/Low (2008)/Scans/back.jpg")
        #expect(KeyTemplate.besideTracks(relativePath: "folder.jpg", folder: "", directory: "Ann/Low (2008)")
            == "Ann/Low (2008)/folder.jpg")
    }
}
