import Testing
@testable import R2UpModel

/// A group's id goes into HTML attributes, form posts and CSS selectors as it is (`serve`):
/// it must come back from them unchanged, and name one group only.
struct TrackGroupIDTests {
    static func group(folder: String = "/m/a", by: StatusGrouping? = nil, artist: String = "", album: String? = nil) -> TrackGroup<String> {
        TrackGroup(
            folder: folder, heading: by.map { GroupHeading(by: $0, album: album, artist: artist) },
            summary: GroupSummary(states: [UploadState]()), tracks: [])
    }

    @Test("an album's id has no control character (a page turned U+001F into U+FFFD); readable names stay readable")
    func readable() {
        #expect(Self.group(by: .album, artist: "Srv Artist", album: "Srv Album").id == "album:Srv Artist/Srv Album")
        #expect(Self.group(by: .artist, artist: "Björk").id == "artist:Björk")
        #expect(Self.group(folder: "/music/A").id == "folder:/music/A")
    }

    @Test("%, control characters and a / inside a name are percent-encoded: no two groups share an id")
    func encoded() {
        #expect(Self.group(by: .album, artist: "AC/DC", album: "100%").id == "album:AC%2FDC/100%25")
        #expect(Self.group(by: .album, artist: "A/B", album: "C").id != Self.group(by: .album, artist: "A", album: "B/C").id)
        #expect(Self.group(folder: "/m/a\nb\u{7F}\u{85}").id == "folder:/m/a%0Ab%7F%C2%85")
        #expect(Self.group(folder: "/m/%41").id != Self.group(folder: "/m/A").id)
        let ids = [
            Self.group(by: .album, artist: "x\u{1F}y", album: "z").id, Self.group(folder: "\t\r").id,
            Self.group(by: .artist, artist: "\u{0}").id,
        ]
        #expect(ids.allSatisfy { !$0.unicodeScalars.contains { $0.properties.generalCategory == .control } }, "\(ids)")
    }
}
