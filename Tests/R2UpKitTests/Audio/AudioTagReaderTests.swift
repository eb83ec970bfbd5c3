import Foundation
import Testing
@testable import R2UpAudio
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// Real audio encoded by ffmpeg and tagged by mutagen (tools/audiocheck.py), read by r2up's
/// TagLib shim and, independently, by mutagen.
@Suite("Audio tags from real files")
struct AudioTagReaderTests {
    static let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("tools/audiocheck.py").path

    static var spec: [[String: Any]] { [
        ["name": "a.mp3", "tags": ["title": "Knuckleheadz", "artist": "Raekwon", "albumartist": "Raekwon", "album": "Only Built 4 Cuban Linx...", "date": "1995", "tracknumber": "2/18", "discnumber": "1/1"]],
        ["name": "b.m4a", "tags": ["title": "Ice Water", "artist": "Raekwon", "albumartist": "Various", "album": "Cuban", "date": "1995-08-01", "tracknumber": "3", "discnumber": "2"]],
        ["name": "c.flac", "tags": ["title": "Für Elise — 日本", "artist": "Björk", "albumartist": "Björk", "album": "Début", "date": "1993", "tracknumber": "1", "discnumber": "1"]],
        ["name": "d.ogg", "tags": ["title": "Vorbis", "artist": "V", "albumartist": "VA", "album": "Ogg", "date": "2001", "tracknumber": "4", "discnumber": "1"]],
        ["name": "e.opus", "tags": ["title": "Opus", "artist": "O", "albumartist": "OA", "album": "Opus Album", "date": "2020", "tracknumber": "5", "discnumber": "3"]],
        ["name": "f.wav", "tags": ["title": "Wave", "artist": "W", "albumartist": "WA", "album": "Riff", "date": "2002", "tracknumber": "6", "discnumber": "1"]],
        ["name": "g.aiff", "tags": ["title": "Aiff", "artist": "Ai", "albumartist": "AiA", "album": "Apple", "date": "1988", "tracknumber": "7", "discnumber": "1"]],
        ["name": "h.mp3"],
    ] }

    /// Makes the files of `spec` in `folder` with ffmpeg and mutagen.
    static func make(_ spec: [[String: Any]], in folder: String) async throws {
        let specPath = folder + "/spec.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: specPath))
        let made = try await Subprocess.run("/usr/bin/env", ["python3", tool, "make", folder, specPath])
        try #require(made.status == 0, "audiocheck make: \(made.stderrText)")
    }

    /// mutagen's reading of the files, by path.
    static func mutagen(_ paths: [String]) async throws -> [String: [String: Any]] {
        let read = try await Subprocess.run("/usr/bin/env", ["python3", tool, "tags"] + paths)
        try #require(read.status == 0, "audiocheck tags: \(read.stderrText)")
        return try #require(try JSONSerialization.jsonObject(with: read.stdout) as? [String: [String: Any]])
    }

    @Test("m4a, mp3, flac, ogg, opus, wav and aiff: every tag TagLib reads is what mutagen reads")
    func formats() async throws {
        let folder = try ScratchFolder()
        try await Self.make(Self.spec, in: folder.path)
        let paths = Self.spec.map { folder.path + "/" + ($0["name"] as? String ?? "") }
        let independent = try await Self.mutagen(paths)
        for path in paths {
            let expected = try #require(independent[path])
            let tags = try #require(AudioTagReader.read(path: path), "\(path) unreadable")
            func leading(_ text: Any?) -> Int? { (text as? String).flatMap { Int($0.split(separator: "/").first ?? "") } }
            #expect(tags.title == expected["title"] as? String, "\(path)")
            #expect(tags.artist == expected["artist"] as? String, "\(path)")
            #expect(tags.albumArtist == expected["albumartist"] as? String, "\(path)")
            #expect(tags.album == expected["album"] as? String, "\(path)")
            #expect(tags.year == (expected["date"] as? String).flatMap { Int($0.prefix(4)) }, "\(path)")
            #expect(tags.track == leading(expected["tracknumber"]), "\(path)")
            #expect(tags.disc == leading(expected["discnumber"]), "\(path)")
            let seconds = try #require(expected["duration"] as? Double)
            #expect(abs(Double(tags.durationMs ?? -1_000_000) / 1000 - seconds) < 0.1, "\(path): \(String(describing: tags.durationMs)) vs \(seconds)")
            // mutagen gives no sample rate for Opus, which always decodes at 48 kHz.
            #expect(tags.sampleRate == (expected["sample_rate"] as? Int ?? 48_000), "\(path)")
            #expect(tags.channels == expected["channels"] as? Int, "\(path)")
            #expect((tags.bitrateKbps ?? 0) > 0, "\(path)")
        }
        // Every field, exactly, for one file.
        #expect(AudioTagReader.read(path: folder.path + "/c.flac").map { AudioTags(title: $0.title, artist: $0.artist, albumArtist: $0.albumArtist, album: $0.album, year: $0.year, track: $0.track, disc: $0.disc) }
            == AudioTags(title: "Für Elise — 日本", artist: "Björk", albumArtist: "Björk", album: "Début", year: 1993, track: 1, disc: 1))
        #expect(AudioTagReader.read(path: folder.path + "/h.mp3")?.hasTags == false)
    }

    @Test("truncated, corrupt, empty and non-audio files: no tags, no crash")
    func broken() async throws {
        let folder = try ScratchFolder()
        try await Self.make([["name": "whole.flac", "tags": ["title": "T"]]], in: folder.path)
        let whole = try Data(contentsOf: URL(fileURLWithPath: folder.path + "/whole.flac"))
        try whole.prefix(100).write(to: URL(fileURLWithPath: folder.path + "/cut.flac"))
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: folder.path + "/noise.mp3"))
        try Data().write(to: URL(fileURLWithPath: folder.path + "/empty.m4a"))
        try Data("text".utf8).write(to: URL(fileURLWithPath: folder.path + "/notes.txt"))
        #expect(AudioTagReader.read(path: folder.path + "/cut.flac")?.hasTags != true)
        #expect(AudioTagReader.read(path: folder.path + "/noise.mp3")?.hasTags != true)
        #expect(AudioTagReader.read(path: folder.path + "/empty.m4a") == nil)
        #expect(AudioTagReader.read(path: folder.path + "/notes.txt") == nil)
        #expect(AudioTagReader.read(path: folder.path + "/missing.ogg") == nil)
        #expect(AudioTagReader.read(path: folder.path + "/whole.flac")?.title == "T")
    }

    @Test("reads from many tasks at once are serialised and agree")
    func concurrent() async throws {
        let folder = try ScratchFolder()
        try await Self.make(Array(Self.spec.prefix(3)), in: folder.path)
        let paths = ["a.mp3", "b.m4a", "c.flac"].map { folder.path + "/" + $0 }
        let first = paths.map { AudioTagReader.read(path: $0) }
        let results = await withTaskGroup(of: [AudioTags?].self) { group in
            for _ in 0..<8 { group.addTask { paths.map { AudioTagReader.read(path: $0) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8 && results.allSatisfy { $0 == first })
    }

    @Test("tags read ahead of the uploads: each file's metadata as the eager reading gave it, waited for, then stored")
    func tagFeed() async throws {
        let folder = try ScratchFolder()
        try await Self.make([Self.spec[0], Self.spec[7]], in: folder.path)
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: folder.path + "/notes.txt"))
        let store = try Store(path: folder.file("r2up.sqlite"))
        let resolver = TagResolver(store: store)
        let base = ObjectAttributes(contentType: "audio/mpeg", metadata: ["artist": "Label"])
        let paths = ["a.mp3", "h.mp3", "notes.txt"].map { folder.path + "/" + $0 }
        let attributes = resolver.attributes(base, forPaths: paths)
        let feed = try #require(attributes.tagFeed)
        // Asked in another order than read: each waits for its own file.
        let h = await feed.attributes(attributes.base, for: paths[1])
        let a = await feed.attributes(attributes.base, for: paths[0])
        let other = await feed.attributes(attributes.base, for: folder.path + "/elsewhere.mp3")
        #expect(a == ObjectAttributes(contentType: "audio/mpeg", metadata: [
            "title": "Knuckleheadz", "artist": "Label", "album": "Only Built 4 Cuban Linx...", "albumartist": "Raekwon",
            "track": "2", "disc": "1", "year": "1995", "duration": a.metadata["duration"] ?? "missing",
        ]))
        #expect(a.metadata["duration"]?.hasPrefix("2.") == true)
        // h.mp3 has no tags, only its audio stream's duration; a file the feed was not given gets the base.
        #expect(h.metadata.keys.sorted() == ["artist", "duration"] && h.metadata["artist"] == "Label")
        #expect(other == base)
        #expect(resolver.attributes(base, forPaths: [paths[2]]).tagFeed == nil)
        try await resolver.save()
        let stored = try store.storedTags(paths: paths)
        #expect(stored[paths[0]]?.tags?.title == "Knuckleheadz" && stored[paths[1]]?.tags?.hasTags == false)
    }
}
