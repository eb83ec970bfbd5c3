import Foundation
import Testing
@testable import R2UpModel

@Suite("Key templates")
struct KeyTemplateTests {
    static let standard = "{albumartist}/{album} ({year})/{disc}-{track:02} {title}.{ext}"
    static let cuban = AudioTags(
        title: "Knuckleheadz", artist: "Raekwon feat. Ghostface", albumArtist: "Raekwon", album: "Only Built 4 Cuban Linx...",
        year: 1995, track: 2, disc: 1)

    @Test("the README's template with full tags")
    func fullTags() throws {
        let template = try KeyTemplate(Self.standard)
        #expect(template.key(tags: Self.cuban, relativePath: "rip/02.FLAC")
            == "Raekwon/Only Built 4 Cuban Linx... (1995)/1-02 Knuckleheadz.flac")
    }

    @Test("fallbacks: artist for album artist, Unknown Artist/Album, the file stem, track 0, disc 1, year 0")
    func fallbacks() throws {
        let template = try KeyTemplate(Self.standard)
        #expect(template.key(tags: nil, relativePath: "a/b/My Song.mp3") == "Unknown Artist/Unknown Album (0)/1-00 My Song.mp3")
        #expect(template.key(tags: AudioTags(artist: "Björk"), relativePath: "x.ogg") == "Björk/Unknown Album (0)/1-00 x.ogg")
        #expect(try KeyTemplate("{artist}/{year:04}/{stem}").key(tags: AudioTags(albumArtist: "VA"), relativePath: "t.opus")
            == "VA/0000/t")
        #expect(try KeyTemplate("{folder}/{title}.{ext}").key(tags: nil, relativePath: "Live/2024/set.wav") == "Live/2024/set.wav")
        #expect(try KeyTemplate("{folder}/{title}.{ext}").key(tags: nil, relativePath: "set.wav") == "set.wav")
        #expect(try KeyTemplate("{title}").key(tags: nil, relativePath: "noext") == "noext")
    }

    @Test("a template that yields only slashes gives no key (\"\"), never a key with an empty segment; found by fuzzing")
    func nothingButSlashes() throws {
        #expect(try KeyTemplate("{folder}/").key(tags: nil, relativePath: "") == "")
        #expect(try KeyTemplate("{folder}/").key(tags: nil, relativePath: "song.mp3") == "")
        #expect(try KeyTemplate("{folder}/ /{album}").key(tags: AudioTags(album: " "), relativePath: "a.mp3") == "")
    }

    @Test("unsafe characters, slashes inside values, dot segments, spaces at segment ends; NFC")
    func safety() throws {
        let tags = AudioTags(
            title: "What?/Why: \"no\" <a|b> *\\", artist: "AC/DC", album: "..", year: 2000, track: 7)
        #expect(try KeyTemplate(Self.standard).key(tags: tags, relativePath: "f.mp3")
            == "AC_DC/.. (2000)/1-07 What__Why_ _no_ _a_b_ __.mp3")
        #expect(try KeyTemplate("{album}/{title}").key(tags: tags, relativePath: "f.mp3") == "_/What__Why_ _no_ _a_b_ __")
        #expect(try KeyTemplate("{artist}/{title}").key(tags: AudioTags(title: "a\u{7}b\u{0}c", artist: "  "), relativePath: "f")
            == "a_b_c")  // an empty segment goes, as a missing {folder} does
        let nfd = "Cafe\u{301}"
        let key = try KeyTemplate("{title}").key(tags: AudioTags(title: nfd), relativePath: "f")
        #expect(key == "Caf\u{E9}")
        #expect(Array(key.utf8) == [0x43, 0x61, 0x66, 0xC3, 0xA9])
    }

    @Test("bad templates: one line naming the problem")
    func badTemplates() {
        #expect(throws: KeyTemplateError.unknownField("{album}/{nope}", "nope")) { try KeyTemplate("{album}/{nope}") }
        #expect(
            KeyTemplateError.unknownField("{nope}", "nope").description
                == "the key template option '{nope}': unknown field '{nope}'; fields are {title} {artist} {albumartist} {album} {year} {track} {disc} {ext} {stem} {folder}")
        #expect(throws: KeyTemplateError.syntax("{album", "a '{' is never closed")) { try KeyTemplate("{album") }
        #expect(throws: KeyTemplateError.syntax("a}b{title}", "a '}' with no '{' before it")) { try KeyTemplate("a}b{title}") }
        #expect(throws: KeyTemplateError.syntax("{title:02}", "'{title:02}': only year, track and disc take a width, like {track:02}")) {
            try KeyTemplate("{title:02}")
        }
        #expect(throws: KeyTemplateError.syntax("{track:x}", "'{track:x}': only year, track and disc take a width, like {track:02}")) {
            try KeyTemplate("{track:x}")
        }
        #expect(throws: KeyTemplateError.syntax("static.mp3", "it names no field, so every file would get the same key")) {
            try KeyTemplate("static.mp3")
        }
        #expect(throws: KeyTemplateError.syntax("/{title}", "a key does not start with '/'")) { try KeyTemplate("/{title}") }
        #expect(throws: KeyTemplateError.syntax("{{title}}", "a '{' inside a field")) { try KeyTemplate("{{title}}") }
    }

    @Test("widths pad numbers; field names are case-insensitive")
    func widths() throws {
        let tags = AudioTags(year: 1995, track: 123, disc: 2)
        #expect(try KeyTemplate("{DISC:03}-{Track:2}-{year:2}").key(tags: tags, relativePath: "f") == "002-123-1995")
    }
}
