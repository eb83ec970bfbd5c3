import Foundation
import Testing

/// `r2up du`: the space tracks take here and in the bucket, from the store, with no request
/// unless --remote.
@Suite("r2up du")
struct DuCommandTests {
    @Test("per folder: on disk, in the bucket, only local, only cloud, both; totals; no request (a dead endpoint works)")
    func folders() async throws {
        let folder = try TemporaryFolder()
        // 01-03 are 8 bytes each ("a/01.m4a"), b/04 too; a/new.m4a (12 bytes) is never uploaded.
        let lib = try await OffloadFixtures.library(folder, ["a/01.m4a", "a/02.m4a", "a/03.m4a", "b/04.m4a"])
        try Data("not uploaded".utf8).write(to: URL(fileURLWithPath: lib.dir + "/a/new.m4a"))
        let offload = try await CLI.run(lib.r2up(["offload", lib.dir + "/a/01.m4a", lib.dir + "/b"]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        // Edited since its upload: its bytes are local only, its old copy still in the bucket.
        try Data("edited, 13 B".utf8).write(to: URL(fileURLWithPath: lib.dir + "/a/03.m4a"))

        var dead = lib.env
        dead["R2UP_ENDPOINT"] = "http://127.0.0.1:9"
        let json = try await CLI.run(lib.r2up(["du", lib.dir, "--json"]), environment: dead)
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let folders = try #require(object["folders"] as? [[String: Any]])
        func numbers(_ row: [String: Any]?) -> [Int] {
            ["tracks", "onDisk", "inBucket", "localOnly", "cloudOnly", "both"].map { (row?[$0] as? Int) ?? -1 }
        }
        let byName = Dictionary(uniqueKeysWithValues: folders.map { ($0["folder"] as? String ?? "", $0) })
        #expect(numbers(byName["a"]) == [4, 8 + 12 + 12, 24, 12 + 12, 8, 8])
        #expect(numbers(byName["b"]) == [1, 0, 8, 0, 8, 0])
        #expect(numbers(object["totals"] as? [String: Any]) == [5, 32, 32, 24, 16, 8])
        #expect(object["remote"] == nil)

        let text = try await CLI.run(lib.r2up(["du", lib.dir]), environment: dead)
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(text.stdout == """
            FOLDER  TRACKS   ON DISK  IN BUCKET  LOCAL ONLY  CLOUD ONLY     BOTH
            a            4  32 bytes   24 bytes    24 bytes     8 bytes  8 bytes
            b            1   0 bytes    8 bytes     0 bytes     8 bytes  0 bytes
            TOTAL        5  32 bytes   32 bytes    24 bytes    16 bytes  8 bytes

            """)

        // Without a folder: the tracks the store knows (a/new.m4a is not one).
        let all = try await CLI.run(lib.r2up(["du", "--json"]), environment: dead)
        let allObject = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any])
        #expect(numbers(allObject["totals"] as? [String: Any]) == [4, 20, 32, 12, 16, 8])
    }

    @Test("a pushed folder pulled into another: two tracks point at each object, and the totals count its bytes in the bucket once")
    func sharedObjects() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])  // 6 bytes each
        let pull = try await CLI.run(lib.r2up(["pull", lib.prefix, folder.path + "/copy/"]), environment: lib.env)
        #expect(pull.status == 0, "stderr: \(pull.stderr)")
        func totals(_ arguments: [String]) async throws -> [Int] {
            let run = try await CLI.run(lib.r2up(["du", "--json"] + arguments), environment: lib.env)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
            let row = object["totals"] as? [String: Any]
            return ["tracks", "onDisk", "inBucket", "localOnly", "cloudOnly", "both"].map { (row?[$0] as? Int) ?? -1 }
        }
        #expect(try await totals([]) == [4, 24, 12, 0, 0, 24])
        #expect(try await totals([folder.path])[2] == 12)  // the walk of DIR (its database files are files too)
        let text = try await CLI.run(lib.r2up(["du", "--remote"]), environment: lib.env)
        #expect(text.status == 0, "stderr: \(text.stderr)")
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("TOTAL") && $0.contains("24 bytes   12 bytes") }, "\(text.stdout)")
        #expect(text.stdout.hasSuffix("Bucket under '\(lib.prefix)': 2 objects (12 bytes); every track's cloud copy is there as recorded.\n"), "\(text.stdout)")
    }

    @Test("--remote lists the prefix: an object deleted behind r2up's back and one no track knows are named")
    func remote() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        try await OffloadFixtures.boto(
            "s3.delete_object(Bucket=b, Key=a[0]); s3.put_object(Bucket=b, Key=a[1], Body=b'stranger')",
            [lib.prefix + "01.m4a", lib.prefix + "extra.m4a"])
        let run = try await CLI.run(lib.r2up(["du", lib.dir, "--remote"]), environment: lib.env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.hasSuffix(
            "Bucket under '\(lib.prefix)': 2 objects (14 bytes); 1 track's object missing (6 bytes); 1 object no track knows (8 bytes).\n"),
            "\(run.stdout)")
        let json = try await CLI.run(lib.r2up(["du", lib.dir, "--remote", "--json"]), environment: lib.env)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let remote = try #require(object["remote"] as? [String: Any])
        #expect(remote["mismatched"] as? [String] == [lib.dir + "/01.m4a"])
    }

    @Test("by album: tagged tracks add up per album, an untagged one stays in its folder's group")
    func byAlbum() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.path + "/lib"
        try await AudioCommandTests.make([
            .init(name: "B/a.flac", tags: ["title": "Human Behaviour", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "1"]),
            .init(name: "B/b.flac", tags: ["title": "Crying", "artist": "Björk", "album": "Début", "date": "1993", "tracknumber": "2"]),
            .init(name: "Misc/x.flac", tags: nil),
        ], in: dir)
        let prefix = PullFixtures.scratchPrefix("du-album")
        let lib = OffloadFixtures.Library(dir: dir, prefix: prefix, db: folder.path + "/db.sqlite", env: try PullFixtures.env(folder))
        let push = try await CLI.run(lib.r2up(["push", dir + "/", "--prefix", prefix]), environment: lib.env)
        #expect(push.status == 0, "stderr: \(push.stderr)")
        let offload = try await CLI.run(lib.r2up(["offload", dir + "/B/a.flac"]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        let size = { (name: String) -> Int in ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + name))?[.size] as? Int) ?? -1 }
        let (b, x) = (size("B/b.flac"), size("Misc/x.flac"))

        let run = try await CLI.run(lib.r2up(["du", dir, "--json"]), environment: lib.env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let groups = try #require(object["folders"] as? [[String: Any]])
        #expect(groups.count == 2, "\(run.stdout)")
        let album = try #require(groups.first { $0["album"] as? String == "Début (1993) — Björk" })
        #expect(album["tracks"] as? Int == 2)
        #expect(album["onDisk"] as? Int == b)
        #expect(album["both"] as? Int == b)
        #expect((album["cloudOnly"] as? Int ?? 0) > 0)
        let misc = try #require(groups.first { $0["folder"] as? String == "Misc" })
        #expect(misc["tracks"] as? Int == 1 && misc["onDisk"] as? Int == x)
        let text = try await CLI.run(lib.r2up(["du", dir, "--by", "folder"]), environment: lib.env)
        #expect(text.stdout.hasPrefix("FOLDER "))
        let firstWords: [String] = text.stdout.split(separator: "\n").map { line in String(line.prefix { $0 != " " }) }
        #expect(firstWords == ["FOLDER", "B", "Misc", "TOTAL"])
    }

    @Test("bad input: a file, a missing folder, --prefix without --remote (exit 2)")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        let env = try PullFixtures.env(folder)
        let file = folder.write("x.m4a", "x")
        let db = ["--db", folder.path + "/db.sqlite"]
        let onFile = try await CLI.run(["du", file] + db, environment: env)
        #expect(onFile.status == 2)
        #expect(onFile.stderr == "r2up: \(file) is not a folder; du takes a folder (or nothing, for every track)\n")
        let missing = try await CLI.run(["du", folder.path + "/nope"] + db, environment: env)
        #expect(missing.status == 2)
        #expect(missing.stderr == "r2up: \(folder.path)/nope: no such folder\n")
        let prefix = try await CLI.run(["du", folder.path, "--prefix", "x/"] + db, environment: env)
        #expect(prefix.status == 2)
        // A folder with no track: no prefix to list (not the whole bucket, every object "unknown").
        let empty = folder.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let remote = try await CLI.run(["du", empty, "--remote"] + db, environment: env)
        #expect(remote.status == 2, "stderr: \(remote.stderr)")
        #expect(remote.stderr == "r2up: \(empty): r2up knows no track here, so --remote has no prefix to list; give --prefix\n")
        #expect(remote.stdout.isEmpty)
    }

    @Test("--remote with the server down: one line with the hint, exit 3 as push (configuration), no table")
    func remoteServerDown() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a"])
        var dead = lib.env
        dead["R2UP_ENDPOINT"] = "http://127.0.0.1:9"  // discard port: nothing listens
        let run = try await CLI.run(lib.r2up(["du", lib.dir, "--remote"]), environment: dead)
        #expect(run.status == 3, "stderr: \(run.stderr)")
        #expect(run.stderr.hasPrefix("r2up: the endpoint refused the connection"), "\(run.stderr)")
        #expect(run.stderr.contains("is the server running?"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }
}
