import Foundation
import Testing

@testable import Uploader

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
            {"bucket":"music","prefix":"p/","schema":"r2up-catalog","tracks":[{"album":"B","albumArtist":"AA","artist":"A","contentType":"audio/flac","duration":61.5,"etag":"e1","key":"p/a/01 Song.flac","size":2048,"title":"Björk","track":2,"uploaded":"2025-06-15T15:06:40Z","url":"https://x/p/a/01%20Song.flac","year":1995},{"etag":"e2","key":"p/b/Demo.take2.mp3","size":1,"title":"Demo.take2","url":"https://x/p/b/Demo.take2.mp3"}],"version":1}
            """#)
    }
}
