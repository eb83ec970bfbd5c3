import Foundation
import GRDB
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("Audio: tags in the store, status by album")
struct AudioStoreTests {
    @Test("a v1 database upgrades: its tracks gain empty tag columns, keep their states, and take tags")
    func upgradeKeepsTracks() throws {
        let folder = try ScratchFolder()
        let path = folder.file("r2up.sqlite")
        try V1Database.make(at: path)
        let store = try Store(path: path)
        #expect(try store.storedTags(under: nil).isEmpty)
        let tags = AudioTags(title: "Intro", artist: "A", album: "B", year: 1999, track: 1, durationMs: 61_000)
        try store.saveTags([("/music/album/01.flac", StoredTags(size: 31_457_280, mtimeNs: 5, tags: tags))])
        let track = try #require(try store.track(path: "/music/album/01.flac"))
        #expect(track.uploadState == .uploaded && track.key == "album/01.flac" && track.mtimeNs == 1_700_000_000_000_000_000)
        #expect(try store.storedTags(under: "/music") == ["/music/album/01.flac": StoredTags(size: 31_457_280, mtimeNs: 5, tags: tags)])
        // A file never seen becomes a track with no state; no tags is stored as "read, none found".
        try store.saveTags([("/new/x.mp3", StoredTags(size: 3, mtimeNs: 4, tags: nil))])
        #expect(try store.track(path: "/new/x.mp3")?.uploadState == UploadState.none)
        #expect(try store.storedTags(paths: ["/new/x.mp3"]) == ["/new/x.mp3": StoredTags(size: 3, mtimeNs: 4, tags: nil)])
    }

    @Test("the catalog cache keeps HEAD results by bucket and key, and forgets removed keys")
    func catalogCache() throws {
        let folder = try ScratchFolder()
        let store = try Store(path: folder.file("r2up.sqlite"))
        let object = CatalogObject(
            etag: "e1", size: 10, contentType: "audio/flac", lastModified: Date(timeIntervalSince1970: 1_750_000_000),
            metadata: ["title": "Björk"])
        try store.updateCatalogObjects(bucket: "b", saving: ["p/a.flac": object, "q/b.flac": object], removing: [])
        #expect(try store.catalogObjects(bucket: "b", prefix: "p/") == ["p/a.flac": object])
        #expect(try store.catalogObjects(bucket: "other", prefix: "").isEmpty)
        try store.updateCatalogObjects(bucket: "b", saving: [:], removing: ["p/a.flac"])
        #expect(try store.catalogObjects(bucket: "b", prefix: "").keys.sorted() == ["q/b.flac"])
    }

    static func track(_ path: String, _ state: UploadState) -> TrackRecord {
        TrackRecord(path: path, size: 1, mtimeNs: 1, uploadState: state, updatedAt: Date(timeIntervalSince1970: 0))
    }

    @Test("status by album: header with album, year, artist, duration, count and seed 000's aggregate; rows by disc and track")
    func byAlbum() throws {
        let tracks = [
            Self.track("/m/cuban/03.flac", .uploading), Self.track("/m/cuban/02.flac", .uploaded),
            Self.track("/m/cuban/d2.flac", .none), Self.track("/m/loose/x.wav", .uploaded),
        ]
        let tags: [String: AudioTags] = [
            "/m/cuban/02.flac": AudioTags(title: "Knuckleheadz", artist: "Raekwon", album: "Only Built 4 Cuban Linx...", year: 1995, track: 2, durationMs: 241_000),
            "/m/cuban/03.flac": AudioTags(title: "Ice Water", artist: "Raekwon", album: "Only Built 4 Cuban Linx...", year: 1995, track: 3, durationMs: 230_000),
            "/m/cuban/d2.flac": AudioTags(title: "Bonus", artist: "Raekwon", album: "Only Built 4 Cuban Linx...", track: 1, disc: 2),
        ]
        let report = StatusReport(tracks: tracks, tags: tags, by: nil)
        #expect(report.lines(style: TerminalStyle(ascii: false, colour: false)) == [
            "Only Built 4 Cuban Linx... (1995) — Raekwon · 7:51  (3)  ↑ 1/3",
            "  ↑ 02 Knuckleheadz  4:01",
            "  ⇡ 03 Ice Water  3:50",  // uploading, hollow where colour is off
            "    2-01 Bonus",
            "/m/loose  (1)  ↑",
            "  ↑ x.wav",
        ])
        #expect(StatusReport(tracks: tracks, tags: tags, by: .folder) == StatusReport(tracks: tracks))
        #expect(StatusReport(tracks: tracks, tags: [:], by: nil) == StatusReport(tracks: tracks))
        let byArtist = StatusReport(tracks: tracks, tags: tags, by: .artist).lines(style: TerminalStyle(ascii: true, colour: false))
        #expect(byArtist.first == "Raekwon  (3)  * 1/3")
        #expect(byArtist[1] == "  ^ 02 Knuckleheadz  4:01  (Only Built 4 Cuban Linx...)")
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(json.contains(#""by":"album""#) && json.contains(#""year":1995"#) && json.contains(#""title":"Ice Water""#))
    }
}
