import Foundation
import Testing
import R2UpModel
@testable import R2UpStore

/// The audio features as a user runs them: real audio made by ffmpeg and tagged by mutagen,
/// pushed and synced to the real server, checked with mutagen, boto3 and a headless Chromium
/// (tools/audiocheck.py).
@Suite("r2up audio: tags, key templates, catalog", .serialized)
struct AudioCommandTests {
    static let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/audiocheck.py").path
    static let template = "{albumartist}/{album} ({year})/{disc}-{track:02} {title}.{ext}"

    struct Item: Codable, Sendable {
        var name: String
        var tags: [String: String]?
        /// A JPEG file to embed as the front cover.
        var picture: String? = nil
    }

    static let library: [Item] = [
        Item(name: "Wu/01.mp3", tags: ["title": "Knuckleheadz", "artist": "Raekwon", "albumartist": "Raekwon", "album": "Only Built 4 Cuban Linx...", "date": "1995", "tracknumber": "2", "discnumber": "1"]),
        Item(name: "Wu/02.m4a", tags: ["title": "Ice Water", "artist": "Raekwon", "albumartist": "Raekwon", "album": "Only Built 4 Cuban Linx...", "date": "1995", "tracknumber": "3", "discnumber": "1"]),
        Item(name: "B/a.flac", tags: ["title": "Human Behaviour", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "1"]),
        Item(name: "B/b.ogg", tags: ["title": "Venus as a Boy — 日本", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "2"]),
        Item(name: "B/c.opus", tags: ["title": "Crying", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "3"]),
        Item(name: "X/w.wav", tags: ["title": "Wave", "artist": "Riff Raff", "album": "Riff", "date": "2002", "tracknumber": "1"]),
        Item(name: "X/a.aiff", tags: ["title": "Aiff", "artist": "Riff Raff", "album": "Riff", "date": "2002", "tracknumber": "2"]),
    ]

    /// The keys `template` gives the library, in its order.
    static let libraryKeys = [
        "Raekwon/Only Built 4 Cuban Linx... (1995)/1-02 Knuckleheadz.mp3",
        "Raekwon/Only Built 4 Cuban Linx... (1995)/1-03 Ice Water.m4a",
        "Björk/Début (1993)/1-01 Human Behaviour.flac",
        "Björk/Début (1993)/1-02 Venus as a Boy — 日本.ogg",
        "Björk/Début (1993)/1-03 Crying.opus",
        "Riff Raff/Riff (2002)/1-01 Wave.wav",
        "Riff Raff/Riff (2002)/1-02 Aiff.aiff",
    ]

    func prefix(_ label: String) -> String { "tests/audio-\(label)-\(UInt32.random(in: 0...UInt32.max))/" }

    static func python(_ arguments: [String], extra: [String: String] = [:]) async throws -> CLI.Run {
        var env = CLI.environment(server: try CLI.serverEnvironment(), home: NSTemporaryDirectory())
        for (name, value) in extra { env[name] = value }
        return try await ProcessRunner.run("/usr/bin/env", ["python3", tool] + arguments, environment: env)
    }

    static func json(_ run: CLI.Run) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(run.stdout.utf8))
    }

    /// Encodes and tags `items` under `folder` (ffmpeg, mutagen).
    static func make(_ items: [Item], in folder: String) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let spec = NSTemporaryDirectory() + "/r2up-audio-spec-\(UUID().uuidString).json"
        try JSONEncoder().encode(items).write(to: URL(fileURLWithPath: spec))
        defer { try? FileManager.default.removeItem(atPath: spec) }
        let made = try await python(["make", folder, spec])
        try #require(made.status == 0, "audiocheck make: \(made.stderr)")
    }

    /// x-amz-meta-* by key, as boto3 reads them and Python's email.header decodes them.
    static func metadata(_ keys: [String]) async throws -> [String: (raw: [String: String], decoded: [String: String])] {
        let bucket = try CLI.serverEnvironment()["R2UP_BUCKET"] ?? ""
        let run = try await python(["head", bucket] + keys)
        try #require(run.status == 0, "audiocheck head: \(run.stderr)")
        let object = try #require(try json(run) as? [String: [String: [String: String]]])
        return object.mapValues { ($0["raw"] ?? [:], $0["decoded"] ?? [:]) }
    }

    static func keys(under prefix: String) async throws -> [String] {
        let run = try await python(["list", try CLI.serverEnvironment()["R2UP_BUCKET"] ?? "", prefix])
        try #require(run.status == 0, "audiocheck list: \(run.stderr)")
        return try #require(try json(run) as? [String])
    }

    static func env(_ folder: borrowing TemporaryFolder) throws -> [String: String] {
        CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
    }

    @Test("push DIR --key-template: tags read as mutagen reads them, stored on the tracks and sent as x-amz-meta-*")
    func tagsStoredAndSent() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try await Self.make(Self.library + [Item(name: "X/untagged.mp3", tags: nil)], in: lib)
        let prefix = prefix("push")
        let db = folder.path + "/db.sqlite"
        let push = try await CLI.run(["push", lib, "--prefix", prefix, "--key-template", Self.template, "--json", "--db", db], environment: try Self.env(folder))
        #expect(push.status == 0, "\(push.stderr)")
        let pushed = try #require(try Self.json(push) as? [[String: Any]]).compactMap { $0["key"] as? String }
        let expectedKeys = (Self.libraryKeys + ["Unknown Artist/Unknown Album (0)/1-00 untagged.mp3"]).map { prefix + $0 }
        #expect(Set(pushed) == Set(expectedKeys))

        // What r2up stored, against mutagen's reading of the same files.
        let paths = Self.library.map { lib + "/" + $0.name }
        let mutagenRun = try await Self.python(["tags"] + paths)
        let independent = try #require(try Self.json(mutagenRun) as? [String: [String: Any]])
        let store = try Store(path: db)
        let stored = try store.storedTags(under: lib)
        let sent = try await Self.metadata(Array(expectedKeys.prefix(Self.library.count)))
        for (index, item) in Self.library.enumerated() {
            let path = lib + "/" + item.name
            let truth = try #require(independent[path])
            let tags = try #require(stored[path]?.tags, "\(path) has no stored tags")
            #expect(tags.title == truth["title"] as? String && tags.artist == truth["artist"] as? String, "\(path)")
            #expect(tags.album == truth["album"] as? String && tags.albumArtist == truth["albumartist"] as? String, "\(path)")
            #expect(tags.year.map(String.init) == truth["date"] as? String && tags.track.map(String.init) == truth["tracknumber"] as? String, "\(path)")
            #expect(tags.disc.map(String.init) == truth["discnumber"] as? String, "\(path)")
            let seconds = try #require(truth["duration"] as? Double)
            #expect(abs(Double(tags.durationMs ?? 0) / 1000 - seconds) < 0.1, "\(path)")
            // What was sent, read back by boto3.
            let meta = try #require(sent[expectedKeys[index]]).decoded
            #expect(meta["title"] == truth["title"] as? String && meta["artist"] == truth["artist"] as? String, "\(path)")
            #expect(meta["album"] == truth["album"] as? String && meta["albumartist"] == truth["albumartist"] as? String, "\(path)")
            #expect(meta["year"] == truth["date"] as? String && meta["track"] == truth["tracknumber"] as? String, "\(path)")
            #expect(meta["disc"] == truth["discnumber"] as? String, "\(path)")
            #expect(abs((Double(meta["duration"] ?? "") ?? -9) - seconds) < 0.1, "\(path)")
        }
        // Non-ASCII travels as one RFC 2047 word; ASCII as it is.
        #expect(sent[expectedKeys[3]]?.raw["title"] == "=?UTF-8?B?" + Data("Venus as a Boy — 日本".utf8).base64EncodedString() + "?=")
        #expect(sent[expectedKeys[0]]?.raw["title"] == "Knuckleheadz")

        // status groups by album, by artist on request; folders for the untagged file.
        let status = try await CLI.run(["status", lib, "--db", db], environment: try Self.env(folder))
        #expect(status.status == 0)
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("Only Built 4 Cuban Linx... (1995) — Raekwon · 0:04  (2)  ↑"), "\(status.stdout)")
        #expect(lines.contains("  ↑ 02 Knuckleheadz  0:02"))
        #expect(lines.contains("\(lib)/X  (1)  ↑") && lines.contains("  ↑ untagged.mp3"))
        let byArtist = try await CLI.run(["status", lib, "--by", "artist", "--json", "--db", db], environment: try Self.env(folder))
        let groups = try #require(try Self.json(byArtist) as? [[String: Any]])
        #expect(groups.compactMap { $0["artist"] as? String } == ["Björk", "Raekwon", "Riff Raff"])
        #expect(groups.compactMap { $0["by"] as? String }.allSatisfy { $0 == "artist" })
    }

    @Test("a changed file's tags are read again; --meta wins over a tag; --no-tag-metadata sends none")
    func changedFileAndFlags() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try await Self.make([Self.library[2]], in: lib)
        let path = lib + "/B/a.flac"
        let prefix = prefix("flags")
        let db = folder.path + "/db.sqlite"
        let env = try Self.env(folder)
        let first = try await CLI.run(["push", path, "--prefix", prefix, "--meta", "artist=Label-Override", "--db", db], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        var sent = try await Self.metadata([prefix + "a.flac"])
        #expect(sent[prefix + "a.flac"]?.decoded["artist"] == "Label-Override")
        #expect(sent[prefix + "a.flac"]?.decoded["title"] == "Human Behaviour")

        try await Task.sleep(for: .milliseconds(20))  // a new mtime
        var retagged = Self.library[2]
        retagged.tags?["title"] = "Retitled"
        try await Self.make([retagged], in: lib)
        let second = try await CLI.run(["push", path, "--prefix", prefix, "--no-tag-metadata", "--db", db], environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Store(path: db).storedTags(paths: [path])[path]?.tags?.title == "Retitled")
        sent = try await Self.metadata([prefix + "a.flac"])
        #expect(sent[prefix + "a.flac"]?.raw == [:])
    }

    @Test("catalog publish: index.json from the bucket, the page plays in Chromium, nothing is sent again")
    func catalog() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try await Self.make(Self.library, in: lib)
        let prefix = prefix("catalog")
        let db = folder.path + "/db.sqlite"
        let env = try Self.env(folder)
        let push = try await CLI.run(
            ["push", lib, "--prefix", prefix, "--key-template", Self.template, "--meta", "label=Loud Records", "--db", db], environment: env)
        #expect(push.status == 0, "\(push.stderr)")

        // The machine that pushed knows what it sent: no HEAD.
        let publish = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--json", "--db", db], environment: env)
        #expect(publish.status == 0, "\(publish.stderr)")
        let result = try #require(try Self.json(publish) as? [String: Any])
        #expect(result["tracks"] as? Int == 7 && result["heads"] as? Int == 0)
        #expect(result["jsonSent"] as? Bool == true && result["htmlSent"] as? Bool == true)
        let base = try CLI.serverEnvironment()["R2UP_PUBLIC_URL"] ?? ""
        let pageURL = try #require(result["url"] as? String)
        #expect(pageURL == base + "/tests/" + String(prefix.dropFirst("tests/".count)) + "index.html")

        // index.json as anyone fetches it from the public URL.
        let fetched = try await ProcessRunner.run("/usr/bin/curl", ["-sf", base + "/" + prefix + "index.json"], environment: [:])
        #expect(fetched.status == 0)
        let index = try #require(try JSONSerialization.jsonObject(with: Data(fetched.stdout.utf8)) as? [String: Any])
        #expect(index["schema"] as? String == "r2up-catalog" && index["version"] as? Int == 1 && index["prefix"] as? String == prefix)
        let tracks = try #require(index["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["key"] as? String } == Self.libraryKeys.map { prefix + $0 }.sorted())
        let venus = try #require(tracks.first { ($0["key"] as? String)?.hasSuffix(".ogg") == true })
        #expect(venus["title"] as? String == "Venus as a Boy — 日本" && venus["artist"] as? String == "Björk")
        #expect(venus["album"] as? String == "Début" && venus["year"] as? Int == 1993 && venus["track"] as? Int == 2)
        #expect(venus["contentType"] as? String == "audio/ogg" && (venus["size"] as? Int ?? 0) > 1000)
        #expect((venus["duration"] as? Double).map { abs($0 - 2) < 0.1 } == true)
        #expect((venus["url"] as? String)?.hasPrefix(base + "/" + prefix) == true && (venus["etag"] as? String)?.count == 32)
        #expect((venus["uploaded"] as? String)?.hasSuffix("Z") == true)

        // Again: one listing, no HEAD, nothing sent.
        let again = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--db", db], environment: env)
        #expect(again.status == 0)
        #expect(again.stdout == "catalog: 7 tracks, 0 objects read, nothing changed\n\(pageURL)\n")
        // A machine that knows nothing HEADs every track and builds the same bytes: nothing to send.
        let other = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--db", folder.path + "/other.sqlite"], environment: env)
        #expect(other.stdout == "catalog: 7 tracks, 7 objects read, nothing changed\n\(pageURL)\n", "\(other.stderr)")

        // The page, opened from the public URL in headless Chromium.
        let screenshot = ProcessInfo.processInfo.environment["R2UP_CATALOG_SCREENSHOT"] ?? folder.path + "/page.png"
        let browse = try await Self.python(["browse", pageURL, screenshot], extra: ["AUDIOCHECK_FILTER": "björk"])
        #expect(browse.status == 0, "\(browse.stderr)")
        let page = try #require(try Self.json(browse) as? [String: Any])
        #expect(page["artists"] as? [String] == ["Björk", "Raekwon", "Riff Raff"])
        #expect(page["albums"] as? [String] == ["Début", "Only Built 4 Cuban Linx...", "Riff"])
        #expect(page["tracks"] as? Int == 7)
        #expect(page["played_key"] as? String == prefix + Self.libraryKeys[2])
        #expect((page["current_time"] as? Double ?? 0) > 0, "\(page)")
        #expect(page["player_error"] is NSNull)
        #expect((page["stats"] as? String)?.hasPrefix("7 tracks · 3 artists") == true)
        #expect(page["filtered_artists"] as? [String] == ["Björk"])
        #expect(page["filtered_tracks"] as? [String] == Array(Self.libraryKeys[2...4]).map { prefix + $0 })
    }

    @Test("two machines, one bucket: each publishes the catalog of both")
    func twoMachines() async throws {
        let folder = try TemporaryFolder()
        let prefix = prefix("studio")
        let env = try Self.env(folder)
        try await Self.make(Array(Self.library[0...1]), in: folder.path + "/a")
        try await Self.make([Self.library[2]], in: folder.path + "/b")
        let dbA = folder.path + "/a.sqlite"
        let dbB = folder.path + "/b.sqlite"
        #expect(try await CLI.run(["push", folder.path + "/a/", "--prefix", prefix, "--db", dbA], environment: env).status == 0)
        let firstA = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--db", dbA], environment: env)
        #expect(firstA.stdout.hasPrefix("catalog: 2 tracks, 0 objects read, sent index.json and index.html"), "\(firstA.stdout)\(firstA.stderr)")

        // B sends no tags and its own Content-Type: what its store knows of the object must say so.
        let pushB = try await CLI.run(
            ["push", folder.path + "/b/", "--prefix", prefix, "--no-tag-metadata", "--content-type", "audio/x-flac", "--db", dbB], environment: env)
        #expect(pushB.status == 0, "\(pushB.stderr)")
        let firstB = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--db", dbB], environment: env)
        #expect(firstB.stdout.hasPrefix("catalog: 3 tracks, 2 objects read, sent index.json\n"), "\(firstB.stdout)\(firstB.stderr)")
        // A sees B's track with one HEAD and builds B's bytes: nothing to send.
        let secondA = try await CLI.run(["catalog", "publish", "--prefix", prefix, "--db", dbA], environment: env)
        #expect(secondA.stdout.hasPrefix("catalog: 3 tracks, 1 objects read, nothing changed"), "\(secondA.stdout)\(secondA.stderr)")

        let fetched = try await ProcessRunner.run(
            "/usr/bin/curl", ["-sf", (try CLI.serverEnvironment()["R2UP_PUBLIC_URL"] ?? "") + "/" + prefix + "index.json"], environment: [:])
        let index = try #require(try JSONSerialization.jsonObject(with: Data(fetched.stdout.utf8)) as? [String: Any])
        let keys = (index["tracks"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        #expect(keys == [prefix + "B/a.flac", prefix + "Wu/01.mp3", prefix + "Wu/02.m4a"])
        let flac = (index["tracks"] as? [[String: Any]])?.first
        #expect(flac?["title"] as? String == "a" && flac?["artist"] == nil && flac?["contentType"] as? String == "audio/x-flac")
    }

    @Test("sync --key-template --publish: templated keys, stable on the next run, the catalog kept current")
    func syncPublish() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        try await Self.make(Array(Self.library[2...4]), in: lib)
        let prefix = prefix("sync")
        let args = ["sync", lib, "--prefix", prefix, "--key-template", Self.template, "--min-age", "0", "--publish", "--db", folder.path + "/db.sqlite"]
        let first = try await CLI.run(args, environment: try Self.env(folder))
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("sync: 3 uploaded") && first.stdout.contains("catalog: 3 tracks, 0 objects read, sent index.json and index.html"), "\(first.stdout)")
        #expect(try await Self.keys(under: prefix) == (Self.libraryKeys[2...4].map { prefix + $0 } + [prefix + "index.html", prefix + "index.json"]).sorted())
        let second = try await CLI.run(args, environment: try Self.env(folder))
        #expect(second.stdout.contains("sync: 0 uploaded (0 bytes), 0 failed, 3 unchanged") && second.stdout.contains("nothing changed"), "\(second.stdout)")
    }

    @Test("bad input: broken audio and wild tags still upload; a bad template, an over-long or shared key send nothing")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        let lib = folder.path + "/lib"
        let longTitle = String(repeating: "é", count: 5_000) + "!"  // 10 KB
        try await Self.make([
            Item(name: "ctl.mp3", tags: ["title": "line1\nline2\u{7}bell", "artist": "tab\there", "album": "Ctl"]),
            Item(name: "long.ogg", tags: ["title": longTitle, "artist": "Long", "album": "Big"]),
            Item(name: "whole.flac", tags: ["title": "Whole", "album": "Cut"]),
        ], in: lib)
        let whole = try Data(contentsOf: URL(fileURLWithPath: lib + "/whole.flac"))
        try whole.prefix(200).write(to: URL(fileURLWithPath: lib + "/cut.flac"))
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131) }).write(to: URL(fileURLWithPath: lib + "/noise.mp3"))
        try FileManager.default.removeItem(atPath: lib + "/whole.flac")
        let env = try Self.env(folder)
        let db = folder.path + "/db.sqlite"

        let prefix = prefix("bad")
        for template in ["{album}/{nope}", "{album", "{title:02}"] {
            let run = try await CLI.run(["push", lib, "--prefix", prefix, "--key-template", template, "--db", db], environment: env)
            #expect(run.status == 2, "\(template)")
            #expect(run.stderr.hasPrefix("r2up: --key-template '\(template)': "), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        }
        let tooLong = try await CLI.run(["push", lib, "--prefix", prefix, "--key-template", "{title}/{title}", "--db", db], environment: env)
        #expect(tooLong.status == 2)
        #expect(tooLong.stderr.contains("long.ogg: --key-template makes a key of 2") && tooLong.stderr.contains("at most 1024"), "\(tooLong.stderr)")
        let shared = try await CLI.run(["push", lib, "--prefix", prefix, "--key-template", "{album}", "--db", db], environment: env)
        #expect(shared.status == 2)
        #expect(shared.stderr == "r2up: \(lib)/cut.flac and \(lib)/noise.mp3 map to the key '\(prefix)Unknown Album' with --key-template; tag them apart or change the template; nothing was sent\n")
        #expect(try await Self.keys(under: prefix).isEmpty)

        let run = try await CLI.run(["push", lib, "--prefix", prefix, "--key-template", "{album}/{stem}.{ext}", "--db", db], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        // Only the folder push's summary line (issue 29 item 5): no warning about the tags.
        #expect(run.stderr.hasPrefix("push: 4 uploaded (") && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        let stored = try Store(path: db).storedTags(under: lib)
        #expect(stored[lib + "/ctl.mp3"]?.tags?.title == "line1 line2 bell" && stored[lib + "/ctl.mp3"]?.tags?.artist == "tab here")
        #expect(stored[lib + "/long.ogg"]?.tags?.title?.utf8.count == 1_024)
        #expect(stored[lib + "/noise.mp3"]?.tags?.hasTags != true && stored[lib + "/cut.flac"]?.tags?.hasTags != true)
        let truncatedTitle = String(repeating: "é", count: 512)
        #expect(try await Self.keys(under: prefix) == [
            prefix + "Big/long.ogg", prefix + "Ctl/ctl.mp3",
            prefix + "Unknown Album/cut.flac", prefix + "Unknown Album/noise.mp3",
        ].sorted())
        let meta = try #require(try await Self.metadata([prefix + "Big/long.ogg"]).values.first)
        let total = meta.raw.reduce(0) { $0 + "x-amz-meta-".utf8.count + $1.key.utf8.count + $1.value.utf8.count }
        #expect(total <= 8_192)
        #expect(meta.decoded["title"] == truncatedTitle && meta.decoded["artist"] == "Long")
    }
}
