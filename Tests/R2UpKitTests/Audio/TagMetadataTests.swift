import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel

@Suite("Tags as object metadata")
struct TagMetadataTests {
    @Test("ASCII goes as it is; anything else as one RFC 2047 B word, and back")
    func encoding() {
        #expect(TagMetadata.encode("Ice Water") == "Ice Water")
        #expect(TagMetadata.encode("Björk") == "=?UTF-8?B?QmrDtnJr?=")
        #expect(TagMetadata.encode("=?not a word") == "=?UTF-8?B?PT9ub3QgYSB3b3Jk?=")
        #expect(TagMetadata.encode(" lead") == "=?UTF-8?B?IGxlYWQ=?=")
        #expect(TagMetadata.decode("=?UTF-8?B?QmrDtnJr?=") == "Björk")
        #expect(TagMetadata.decode("=?utf-8?q?Caf=C3=A9_au_lait?=") == "Café au lait")
        #expect(TagMetadata.decode("plain") == "plain")
        #expect(TagMetadata.decode("=?UTF-8?B?***?=") == "=?UTF-8?B?***?=")
    }

    @Test("values: names, numbers and seconds with three decimals")
    func values() {
        let tags = AudioTags(
            title: "T", artist: "A", albumArtist: "AA", album: "Al", year: 1995, track: 2, disc: 1, durationMs: 215_042,
            bitrateKbps: 320, sampleRate: 44_100, channels: 2)
        let merged = TagMetadata.merged(tags: tags, user: ["artist": "override", "label": "x"])
        #expect(merged == [
            "title": "T", "artist": "override", "albumartist": "AA", "album": "Al", "year": "1995", "track": "2", "disc": "1",
            "duration": "215.042", "label": "x",
        ])
        #expect(TagMetadata.seconds(milliseconds: 5) == "0.005")
        #expect(TagMetadata.seconds(milliseconds: 60_000) == "60.000")
    }

    @Test("R2's 8 KiB: the longest tag is cut first, user metadata never")
    func limit() {
        let long = String(repeating: "é", count: 512)  // 1,024 bytes, the most a stored tag holds
        let tags = AudioTags(title: long, artist: long, albumArtist: long, album: long, track: 1)
        let user = ["note": String(repeating: "n", count: 2_000)]
        let merged = TagMetadata.merged(tags: tags, user: user)
        let total = merged.reduce(0) { $0 + "x-amz-meta-".utf8.count + $1.key.utf8.count + $1.value.utf8.count }
        #expect(total <= TagMetadata.limitBytes)
        #expect(merged["note"] == user["note"])
        #expect(merged["track"] == "1")
        // Cut values decode to whole characters, a prefix of the tag.
        for name in ["title", "artist", "album", "albumartist"] {
            let value = TagMetadata.decode(merged[name] ?? "")
            #expect(long.hasPrefix(value) && value.count >= 8, "\(name)")
        }
        let unchanged = TagMetadata.merged(tags: AudioTags(title: long), user: [:])
        #expect(TagMetadata.decode(unchanged["title"] ?? "") == long)
    }

    @Test("tag text: control characters become spaces, ends trimmed, at most 1,024 bytes on a character boundary")
    func clean() {
        #expect(AudioTags.clean("line1\nline2\u{7}bell\u{85}") == "line1 line2 bell")
        #expect(AudioTags.clean("  \t ") == nil)
        #expect(AudioTags.clean(nil) == nil)
        let title = AudioTags.clean(String(repeating: "é", count: 5_000) + "x") ?? ""
        #expect(title.utf8.count == 1_024 && title.count == 512)
        #expect(AudioTags.clean("ab" + String(repeating: "€", count: 400))?.utf8.count == 1_022)
        #expect(AudioTags.year(fromDate: "1995-08-01") == 1995)
        #expect(AudioTags.year(fromDate: "95") == nil)
        #expect(AudioTags.durationText(milliseconds: 241_499) == "4:01")
        #expect(AudioTags.durationText(milliseconds: 3_723_000) == "1:02:03")
    }

    @Test("the fast trim is Foundation's CharacterSet.whitespaces trim, scalar for scalar; clean's ASCII fast path changes nothing")
    func trimmingWhitespace() {
        var differ: [UInt32] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "b"
            let padded = String(Character(scalar)) + text + String(Character(scalar))
            if AudioTags.trimmingWhitespace(padded) != padded.trimmingCharacters(in: .whitespaces) { differ.append(value) }
        }
        #expect(differ.isEmpty, "\(differ.prefix(10).map { String($0, radix: 16) })")
        #expect(AudioTags.trimmingWhitespace("\u{3000} x y\u{200B}") == "x y")
        #expect(AudioTags.trimmingWhitespace(" \u{A0}\t") == "")
        #expect(AudioTags.trimmingWhitespace("𝄞 ") == "𝄞")
        #expect(AudioTags.clean("Ice Water") == "Ice Water")
        #expect(AudioTags.clean(" Ice Water") == "Ice Water")
        #expect(AudioTags.clean("Ice Water\u{7F}") == "Ice Water")
        #expect(AudioTags.clean("x") == "x")
        #expect(AudioTags.clean("") == nil)
        #expect(AudioTags.clean(String(repeating: "a", count: 1_025))?.utf8.count == 1_024)
    }
}
