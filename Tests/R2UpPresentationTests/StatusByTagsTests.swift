import Foundation
import R2UpTestSupport
import Testing
@testable import r2up
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore

@Suite("status grouped by tags")
struct StatusByTagsTests {
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
            "  Disc 1",
            "  ↑ 02 Knuckleheadz  4:01",
            "  ⇡ 03 Ice Water  3:50",  // uploading, hollow where colour is off
            "  Disc 2",
            "    01 Bonus",
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
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let discs = try #require(groups.first?["discs"] as? [[String: Any]])
        #expect(discs.map { "\($0["disc"] as? Int ?? 0) \($0["title"] as? String ?? "") \($0["tracks"] as? Int ?? 0)" } == ["1 Disc 1 2", "2 Disc 2 1"])
    }

    @Test("a compilation (several artists, one folder and album title, no album artist) is one album under Various Artists, genre shown")
    func compilation() throws {
        let tracks = [Self.track("/m/hits/1.mp3", .uploaded), Self.track("/m/hits/2.mp3", .none)]
        let tags: [String: AudioTags] = [
            "/m/hits/1.mp3": AudioTags(title: "One", artist: "Ann", album: "Hits", year: 2001, track: 1, genre: "Pop", durationMs: 60_000),
            "/m/hits/2.mp3": AudioTags(title: "Two", artist: "Bob", album: "Hits", year: 2001, track: 2, genre: "Pop", durationMs: 60_000),
        ]
        let report = StatusReport(tracks: tracks, tags: tags, by: nil)
        #expect(report.lines(style: TerminalStyle(ascii: false, colour: false)) == [
            "Hits (2001) — Various Artists · Pop · 2:00  (2)  ⇡ 1/2",
            "  ↑ 01 One — Ann  1:00",
            "    02 Two — Bob  1:00",
        ])
        let byArtist = StatusReport(tracks: tracks, tags: tags, by: .artist).lines(style: TerminalStyle(ascii: false, colour: false))
        #expect(byArtist.first == "Various Artists  (2)  ⇡ 1/2")
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(json.contains(#""compilation":true"#) && json.contains(#""genre":"Pop""#) && json.contains(#""discs":[]"#), "\(json)")
    }

    @Test("a folder scan lists unknown files, known ones in path order, and known tracks whose file is gone")
    func scan() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("trackscan-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for name in ["a-b", "a/x", "a/y", "z", ".hidden"] {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("12345".utf8).write(to: URL(fileURLWithPath: path))
        }
        let store = try Store(path: root + "/.db.sqlite")
        try store.upsertTrack(path: root + "/a/y", size: 5, mtimeNs: 1)
        try store.setUploadState(path: root + "/a/y", state: .uploaded, cloud: CloudCopy(bucket: "b", key: "a/y", etag: nil))
        try store.upsertTrack(path: root + "/a/gone", size: 5, mtimeNs: 1)
        try store.setUploadState(path: root + "/a/gone", state: .uploaded, cloud: CloudCopy(bucket: "b", key: "a/gone", etag: nil))
        let tracks = try TrackScan.tracks(under: root, store: store)
        #expect(tracks.map { String($0.path.dropFirst(root.count + 1)) } == ["a-b", "a/gone", "a/x", "a/y", "z"])
        #expect(tracks.map { $0.icon(isLocal: $0.isOnDisk) } == [.localOnly, .cloudOnly, .localOnly, .localOnly, .localOnly])
        #expect(tracks.map(\.changedSinceUpload) == [false, false, false, true, false])

        // Grouped one folder at a time from the compact scan: the same groups as from records.
        var streamed: [StatusReport.Group] = []
        StatusReport.forEachFolderGroup(tracks, isLocal: { $0.isOnDisk }) { streamed.append($0) }
        #expect(streamed == StatusReport(tracks: Array(tracks), isLocal: { $0.isOnDisk }).groups)
        #expect(streamed.map(\.folder) == [root, root + "/a"])
        #expect(streamed.map { $0.tracks.map(\.name) } == [["a-b", "z"], ["gone", "x", "y"]])
        #expect(streamed.map(\.summary.total) == [2, 3])
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
}
