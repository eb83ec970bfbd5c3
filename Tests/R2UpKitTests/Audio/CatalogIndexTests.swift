import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
@testable import R2UpTransfer

@Suite("Catalog index.json")
struct CatalogIndexTests {
    @Test("the bytes of index.json: sorted keys, unknown fields left out, fallbacks from the key")
    func encoding() {
        let tagged = CatalogObject(
            etag: "e1", size: 2_048, contentType: "audio/flac", lastModified: Date(timeIntervalSince1970: 1_750_000_000),
            metadata: ["title": "Björk\u{7}", "artist": "A", "album": "B", "albumartist": "AA", "year": "1995", "track": "2",
                       "disc": "x", "duration": "61.5", "label": "ignored"])
        let bare = CatalogObject(etag: "e2", size: 1, contentType: nil, lastModified: nil, metadata: ["duration": "-3"])
        let index = CatalogIndex(bucket: "music", prefix: "p/", tracks: [
            CatalogTrack(key: "p/a/01 Song.flac", url: "https://x/p/a/01%20Song.flac", details: tagged),
            CatalogTrack(key: "p/b/Demo.take2.mp3", url: "https://x/p/b/Demo.take2.mp3", details: bare),
        ])
        #expect(String(decoding: index.encoded(), as: UTF8.self) == #"""
            {"albums":[{"album":"B","artist":"AA","compilation":false,"discs":[],"duration":61.5,"tracks":["p/a/01 Song.flac"],"year":1995},{"album":"Unknown Album","artist":"Unknown Artist","compilation":false,"discs":[],"tracks":["p/b/Demo.take2.mp3"]}],"bucket":"music","prefix":"p/","schema":"r2up-catalog","tracks":[{"album":"B","albumArtist":"AA","artist":"A","contentType":"audio/flac","duration":61.5,"etag":"e1","key":"p/a/01 Song.flac","size":2048,"title":"Björk","track":2,"uploaded":"2025-06-15T15:06:40Z","url":"https://x/p/a/01%20Song.flac","year":1995},{"etag":"e2","key":"p/b/Demo.take2.mp3","size":1,"title":"Demo.take2","url":"https://x/p/b/Demo.take2.mp3"}],"version":1}
            """#)
    }

    @Test("a duration no recording has (1e308 s, written by anyone) is left out, never a trap or a lost index; found by fuzzing")
    func hostileDuration() throws {
        func object(_ duration: String) -> CatalogObject {
            CatalogObject(etag: "e", size: 1, contentType: "audio/mp4", lastModified: nil,
                          metadata: ["artist": "A", "album": "B", "disc": "-1", "duration": duration])
        }
        let tracks = [
            CatalogTrack(key: "b/01.m4a", url: "https://x/b/01.m4a", details: object("1e308")),
            CatalogTrack(key: "b/02.m4a", url: "https://x/b/02.m4a", details: object("1e308")),
            CatalogTrack(key: "b/03.m4a", url: "https://x/b/03.m4a", details: object("9999999")),
        ]
        #expect(tracks.map(\.duration) == [nil, nil, 9_999_999])
        #expect(tracks.map(\.disc) == [nil, nil, nil])
        let index = CatalogIndex(bucket: "music", prefix: "", tracks: tracks)
        #expect(index.albums.map(\.duration) == [9_999_999])
        let read = try JSONDecoder().decode(CatalogIndex.self, from: Data(index.encoded()))
        #expect(read == index)
        // An index.json read back with such a value (written by another tool) is grouped again safely.
        var decoded = tracks[0]
        decoded.duration = 1e308
        #expect(decoded.tags.durationMs == nil)
        #expect(CatalogIndex(bucket: "music", prefix: "", tracks: [decoded]).albums.count == 1)
    }

    @Test("what an upload sent, as the catalog cache row a HEAD would give; what a server might change is left to a HEAD")
    func sentObjects() {
        var attributes = ObjectAttributes(contentType: "audio/mpeg", metadata: [
            "title": TagMetadata.encode("Venus — 日本"), "Label": "Loud", "track": "2", "empty": "",
        ])
        #expect(SentObjects.catalogObject(etag: "e1", size: 9, attributes: attributes) == CatalogObject(
            etag: "e1", size: 9, contentType: "audio/mpeg", lastModified: nil,
            metadata: ["title": "Venus — 日本", "label": "Loud", "track": "2"]))
        #expect(SentObjects.catalogObject(etag: "", size: 9, attributes: attributes) == nil)
        attributes.metadata["note"] = "trailing "
        #expect(SentObjects.catalogObject(etag: "e1", size: 9, attributes: attributes) == nil)
        attributes.metadata = ["my_key": "x"]
        #expect(SentObjects.catalogObject(etag: "e1", size: 9, attributes: attributes) == nil)
        attributes.metadata = [:]
        attributes.contentType = ""
        #expect(SentObjects.catalogObject(etag: "e1", size: 9, attributes: attributes) == nil)
        attributes.contentType = nil
        #expect(SentObjects.catalogObject(etag: "e1", size: 9, attributes: attributes) == CatalogObject(
            etag: "e1", size: 9, contentType: nil, lastModified: nil, metadata: [:]))

        // Only audio keys are kept, by bucket; taking them empties the list.
        let sent = SentObjects()
        sent.note(bucket: "b", key: "a/1.mp3", etag: "e1", size: 1, attributes: ObjectAttributes(contentType: "audio/mpeg"))
        sent.note(bucket: "b", key: "a/cover.jpg", etag: "e2", size: 2, attributes: ObjectAttributes(contentType: "image/jpeg"))
        sent.note(bucket: "c", key: "2.flac", etag: "e3", size: 3, attributes: ObjectAttributes(contentType: "audio/flac", metadata: ["a b": "x"]))
        #expect(sent.take() == ["b": ["a/1.mp3": CatalogObject(etag: "e1", size: 1, contentType: "audio/mpeg", lastModified: nil, metadata: [:])]])
        #expect(sent.take().isEmpty)
    }

    @Test("the cache's metadata column read without JSONDecoder: what JSONEncoder wrote comes back, anything else is refused")
    func metadataColumn() throws {
        let values: [String: String] = [
            "title": "Venus — 日本 \"quoted\" back\\slash a/b", "control": "tab\tnl\nbell\u{7}\u{1F}", "emoji": "𝄞🎵",
            "": "empty name", "empty": "",
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let written = String(decoding: try encoder.encode(values), as: UTF8.self)
        #expect(Store.stringMap(json: written) == values)
        #expect(Store.stringMap(json: "{}") == [:])
        // What the store writes: exact text, and both readers agree on it.
        let text = Store.json(stringMap: values)
        #expect(text == #"{"":"empty name","control":"tab\u0009nl\u000abell\u0007\u001f","emoji":"𝄞🎵","empty":"","title":"Venus — 日本 \"quoted\" back\\slash a/b"}"#)
        #expect(Store.stringMap(json: text) == values)
        #expect(try JSONDecoder().decode([String: String].self, from: Data(text.utf8)) == values)
        #expect(Store.json(stringMap: [:]) == "{}")
        #expect(Store.stringMap(json: #" { "a" : "\u00e9\ud834\udd1e" , "b":"\/" } "#) == ["a": "é𝄞", "b": "/"])
        for bad in [#"{"a":1}"#, #"{"a":"b""#, #"{"a":"b"} x"#, #"["a"]"#, #"{"a":"\ud834"}"#, #"{"a":"\x"}"#, #"{"a":"b","a":"c"}"#, "", "{\"a\":\"\u{1}\"}"] {
            #expect(Store.stringMap(json: bad) == nil, "\(bad)")
        }
    }
}
