import Foundation
import Testing
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// `r2up status`: tracks by folder with seed 000's icons and group summaries.
@Suite("r2up status")
struct StatusCommandTests {
    /// Four albums under `music/`, states set through the store as push would set them:
    /// A (uploaded, uploading, none), B (uploaded, error), C (all uploaded), D (no state),
    /// and one track whose file is gone but whose cloud copy is known.
    struct Fixture: ~Copyable {
        let folder: TemporaryFolder
        let database: String
        let music: String

        init() throws {
            // Everything that can throw runs before `self.folder` is set (a noncopyable field).
            let folder = try TemporaryFolder()
            let database = folder.path + "/r2up.sqlite"
            let music = folder.path + "/music"
            let store = try Store(path: database)
            let states: [(String, UploadState, String?)] = [
                ("A/1 One.flac", .uploaded, nil), ("A/2 Two.flac", .uploading, nil), ("A/3 Three.flac", .none, nil),
                ("B/1 Ok.flac", .uploaded, nil), ("B/2 Bad.flac", .error, "SignatureDoesNotMatch"),
                ("C/1.flac", .uploaded, nil), ("C/2.flac", .uploaded, nil),
                ("D/x.flac", .none, nil),
            ]
            for (name, state, error) in states {
                let path = music + "/" + name
                try FileManager.default.createDirectory(
                    atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
                // The file as it is on disk: a track whose file moved on is "changed since upload".
                try store.upsertTrack(path: path, size: 1, mtimeNs: try StatusFiles.mtimeNs(path))
                let cloud = state == .uploaded ? CloudCopy(bucket: "tracks", key: name, etag: "\"e\"") : nil
                try store.setUploadState(path: path, state: state, error: error, cloud: cloud)
                if state == .uploading {
                    // Uploading is true only while a live process holds the job: this one does.
                    try store.enqueue(
                        UploadJob(
                            path: path, bucket: "tracks", key: name, contentType: "audio/flac", length: 1, mtimeNs: try StatusFiles.mtimeNs(path),
                            createdAt: Date()))
                }
            }
            // Uploaded earlier, then deleted here: only the cloud copy is left.
            try store.upsertTrack(path: music + "/D/gone.flac", size: 1, mtimeNs: 1)
            try store.setUploadState(
                path: music + "/D/gone.flac", state: .none, cloud: CloudCopy(bucket: "tracks", key: "D/gone.flac", etag: nil))
            // Outside music/: only listed without a folder argument.
            try store.upsertTrack(path: folder.path + "/elsewhere/z.flac", size: 1, mtimeNs: 1)
            self.database = database
            self.music = music
            self.folder = folder
        }

        func run(_ arguments: [String], lang: String) async throws -> CLI.Run {
            try await CLI.run(
                ["status"] + arguments + ["--db", database],
                environment: ReadCommands.environment(home: folder.path, extra: ["LANG": lang]))
        }
    }

    @Test("Unicode icons under a UTF-8 locale, grouped by folder with count and summary")
    func unicode() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run([fixture.music], lang: "C.UTF-8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.isEmpty)
        let m = fixture.music
        #expect(run.stdout == """
            \(m)/A  (3)  ↑ 1/3
              ↑ 1 One.flac
              ⇡ 2 Two.flac
                3 Three.flac
            \(m)/B  (2)  ⚠ 1/2
              ↑ 1 Ok.flac
              ⚠ 2 Bad.flac: SignatureDoesNotMatch
            \(m)/C  (2)  ↑
              ↑ 1.flac
              ↑ 2.flac
            \(m)/D  (2)
              ☁ gone.flac
                x.flac

            9 tracks: 1 uploading, 1 upload error, 4 uploaded, 1 cloud only, 2 not uploaded

            """)
        // No colour: stdout is a pipe.
        #expect(!run.stdout.contains("\u{1B}"))
    }

    @Test("ASCII icons when the locale is not UTF-8 (LANG=C)")
    func ascii() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run([fixture.music + "/"], lang: "C")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let m = fixture.music
        #expect(run.stdout == """
            \(m)/A  (3)  * 1/3
              ^ 1 One.flac
              * 2 Two.flac
                3 Three.flac
            \(m)/B  (2)  ! 1/2
              ^ 1 Ok.flac
              ! 2 Bad.flac: SignatureDoesNotMatch
            \(m)/C  (2)  ^
              ^ 1.flac
              ^ 2.flac
            \(m)/D  (2)
              @ gone.flac
                x.flac

            9 tracks: 1 uploading, 1 upload error, 4 uploaded, 1 cloud only, 2 not uploaded

            """)
    }

    @Test("a subfolder narrows the list; no folder lists every track")
    func scope() async throws {
        let fixture = try Fixture()
        let one = try await fixture.run([fixture.music + "/C"], lang: "C.UTF-8")
        // The last line gives the totals (issue 29 item 8).
        #expect(one.stdout == "\(fixture.music)/C  (2)  ↑\n  ↑ 1.flac\n  ↑ 2.flac\n\n2 tracks: 2 uploaded\n")

        let all = try await fixture.run([], lang: "C.UTF-8")
        #expect(all.stdout.contains("\(fixture.folder.path)/elsewhere  (1)\n    z.flac\n"))
        #expect(all.stdout.contains("\(fixture.music)/A  (3)"))

        // An empty folder has no tracks; a folder that is not there (and holds no known track) is bad input.
        try FileManager.default.createDirectory(atPath: fixture.folder.path + "/empty", withIntermediateDirectories: true)
        let empty = try await fixture.run([fixture.folder.path + "/empty"], lang: "C.UTF-8")
        #expect(empty.status == 0)
        #expect(empty.stdout.isEmpty)
        #expect(empty.stderr == "No tracks under \(fixture.folder.path)/empty.\n")
        let none = try await fixture.run([fixture.folder.path + "/nothing"], lang: "C.UTF-8")
        #expect(none.status == 2)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr == "r2up: \(fixture.folder.path)/nothing: no such folder\n")
    }

    @Test("a folder deleted whose tracks r2up knows: listed cloud only, no line about reading it, exit 0")
    func deletedFolder() async throws {
        let folder = try TemporaryFolder()
        let database = folder.path + "/r2up.sqlite"
        let gone = folder.path + "/Gone"
        let store = try Store(path: database)
        try store.upsertTrack(path: gone + "/1.flac", size: 1, mtimeNs: 1)
        try store.setUploadState(path: gone + "/1.flac", state: .uploaded, cloud: CloudCopy(bucket: "tracks", key: "Gone/1.flac", etag: nil))
        let run = try await CLI.run(
            ["status", gone, "--db", database], environment: ReadCommands.environment(home: folder.path, extra: ["LANG": "C.UTF-8"]))
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.stdout.contains("☁ 1.flac"), "\(run.stdout)")
    }

    @Test("--json: folders with summary counts and tracks with icon and state names")
    func json() async throws {
        let fixture = try Fixture()
        let run = try await fixture.run([fixture.music, "--json"], lang: "C")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        #expect(groups.map { $0["folder"] as? String } == ["A", "B", "C", "D"].map { fixture.music + "/" + $0 })
        for group in groups { #expect(group.keys.sorted() == ["folder", "summary", "tracks"]) }

        let a = try #require(groups[0]["summary"] as? [String: Any])
        #expect(a.keys.sorted() == ["errors", "name", "total", "uploaded", "uploading"])
        #expect(a["name"] as? String == "uploading")
        #expect(a["total"] as? Int == 3)
        #expect(a["uploaded"] as? Int == 1)
        #expect(a["uploading"] as? Int == 1)
        #expect(a["errors"] as? Int == 0)
        #expect((groups[1]["summary"] as? [String: Any])?["name"] as? String == "error")
        #expect((groups[2]["summary"] as? [String: Any])?["name"] as? String == "allUploaded")
        #expect((groups[3]["summary"] as? [String: Any])?["name"] is NSNull)

        let b = try #require(groups[1]["tracks"] as? [[String: Any]])
        #expect(b.count == 2)
        for track in b {
            #expect(
                track.keys.sorted() == [
                    "changedSinceUpload", "downloadState", "etag", "icon", "interrupted", "key", "lastError", "path", "pendingCopyKey",
                    "uploadState",
                ])
        }
        #expect(b[0]["path"] as? String == fixture.music + "/B/1 Ok.flac")
        #expect(b[0]["icon"] as? String == "uploaded")
        #expect(b[0]["key"] as? String == "B/1 Ok.flac")
        #expect(b[0]["etag"] as? String == "\"e\"")
        #expect(b[0]["lastError"] is NSNull)
        #expect(b[1]["icon"] as? String == "uploadError")
        #expect(b[1]["uploadState"] as? String == "error")
        #expect(b[1]["downloadState"] as? String == "none")
        #expect(b[1]["lastError"] as? String == "SignatureDoesNotMatch")
        #expect(b[1]["key"] is NSNull)

        let d = try #require(groups[3]["tracks"] as? [[String: Any]])
        #expect(d.map { $0["icon"] as? String } == ["cloudOnly", "localOnly"])
    }

    @Test("an empty store: a note on stderr, [] for --json, exit 0, no database created")
    func empty() async throws {
        let folder = try TemporaryFolder()
        let env = ReadCommands.environment(home: folder.path)
        let database = folder.path + "/r2up.sqlite"
        let run = try await CLI.run(["status", "--db", database], environment: env)
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "No tracks yet.\n")
        let json = try await CLI.run(["status", "--json", "--db", database], environment: env)
        #expect(json.status == 0)
        #expect(json.stdout == "[]\n")
        #expect(!FileManager.default.fileExists(atPath: database))
    }
}
