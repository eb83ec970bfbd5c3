import Foundation
import Testing
@testable import R2UpModel
@testable import R2UpStore

/// Issue 14, items 2 and 3, as a user meets them: no push replaces another track's object.
/// The bucket is read with boto3, the store with r2up's own reader.
@Suite("r2up push: never replaces another track's object")
struct TrackIdentityCommandTests {
    /// boto3 on the test server: `get KEY` prints the object's bytes (or MISSING), `put KEY TEXT`
    /// writes it (a writer behind r2up's back).
    static func boto3(_ arguments: [String]) async throws -> String {
        try await Boto3Script.run(
            """
            if sys.argv[1] == "put":
                s3.put_object(Bucket=bucket, Key=sys.argv[2], Body=sys.argv[3].encode())
            else:
                try:
                    sys.stdout.write(s3.get_object(Bucket=bucket, Key=sys.argv[2])["Body"].read().decode())
                except s3.exceptions.NoSuchKey:
                    sys.stdout.write("MISSING")
            """, arguments)
    }

    static func prefix(_ label: String) -> String { "track-identity/\(label)-\(UInt32.random(in: 0...UInt32.max))" }

    @Test("two albums' '01 - Track 1.m4a': the second is refused (exit 1), then --overwrite replaces it")
    func twoAlbums() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path + "/Album A", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path + "/Album B", withIntermediateDirectories: true)
        let a = folder.write("Album A/01 - Track 1.m4a", "album A, track 1")
        let b = folder.write("Album B/01 - Track 1.m4a", "album B, track 1, another song")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("albums")
        let key = prefix + "/01 - Track 1.m4a"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)

        let first = try await CLI.run(["push", a, "--prefix", prefix, "--db", db], environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        // The refusal says when the other track was uploaded, in local time with its zone.
        let second = try await CLI.run(["push", b, "--prefix", prefix, "--db", db], environment: env.merging(["TZ": "Asia/Tokyo"]) { $1 })
        #expect(second.status == 1)
        #expect(second.stdout.isEmpty)
        let lines = second.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(second.stderr)")
        #expect(second.stderr.hasPrefix("r2up: \(b): the key '\(key)' holds \(a) uploaded 20"))
        #expect(second.stderr.hasSuffix(" +09:00; not sent (--overwrite replaces it, --key or --prefix picks another key)\n"))
        #expect(try await Self.boto3(["get", key]) == "album A, track 1")
        do {
            let store = try Store(path: db)
            #expect(try store.track(path: b)?.uploadState == .error)
            #expect(try store.track(path: b)?.lastError?.contains("holds \(a)") == true)
            #expect(try store.track(path: a)?.uploadState == .uploaded)
            #expect(try store.recentUploads(limit: 10).filter { $0.r2Key == key }.count == 1)
        }

        let replaced = try await CLI.run(["push", b, "--prefix", prefix, "--overwrite", "--db", db], environment: env)
        #expect(replaced.status == 0, "stderr: \(replaced.stderr)")
        #expect(try await Self.boto3(["get", key]) == "album B, track 1, another song")
        let store = try Store(path: db)
        #expect(try store.recentUploads(limit: 10).filter { $0.r2Key == key }.count == 2)
        let trackA = try store.track(path: a)
        #expect(trackA?.uploadState == UploadState.none)
        #expect(trackA?.key == nil)
        #expect(try store.track(path: b)?.uploadState == .uploaded)
        #expect(try store.track(path: b)?.key == key)
    }

    @Test("an object changed behind r2up's back: the next push of its track is a conflict, the object untouched")
    func concurrentWriter() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("song.m4a", "r2up's bytes")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("writer")
        let key = prefix + "/song.m4a"
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let first = try await CLI.run(["push", track, "--prefix", prefix, "--db", db], environment: env)
        #expect(first.status == 0, "stderr: \(first.stderr)")
        _ = try await Self.boto3(["put", key, "someone else's bytes"])
        _ = folder.write("song.m4a", "r2up's bytes, edited")

        let again = try await CLI.run(["push", track, "--prefix", prefix, "--db", db], environment: env)
        #expect(again.status == 1)
        #expect(again.stderr.hasPrefix("r2up: \(track): the key '\(key)' "), "stderr: \(again.stderr)")
        #expect(again.stderr.contains("that r2up wrote: it changed behind r2up's back"))
        #expect(again.stderr.hasSuffix("; not replaced (--overwrite replaces it)\n"))
        #expect(try await Self.boto3(["get", key]) == "someone else's bytes")
        #expect(try Store(path: db).track(path: track)?.uploadState == .error)

        // The track's own object, unchanged on the server: a push goes through (If-Match holds).
        let other = folder.write("other.m4a", "v1")
        #expect(try await CLI.run(["push", other, "--prefix", prefix, "--db", db], environment: env).status == 0)
        _ = folder.write("other.m4a", "v2")
        let edited = try await CLI.run(["push", other, "--prefix", prefix, "--db", db], environment: env)
        #expect(edited.status == 0, "stderr: \(edited.stderr)")
        #expect(try await Self.boto3(["get", prefix + "/other.m4a"]) == "v2")
    }

    @Test("--no-clobber refuses every existing object, r2up's own too; a stranger's object is refused by default")
    func noClobber() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("mine.m4a", "mine")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("noclobber")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", track, "--prefix", prefix, "--db", db], environment: env).status == 0)
        _ = folder.write("mine.m4a", "mine, edited")
        let refused = try await CLI.run(["push", track, "--prefix", prefix, "--no-clobber", "--db", db], environment: env)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the key '\(prefix)/mine.m4a' already holds an object"), "stderr: \(refused.stderr)")
        #expect(try await Self.boto3(["get", prefix + "/mine.m4a"]) == "mine")

        // An object no track of this store wrote: never replaced without --overwrite.
        let strangerKey = prefix + "/stranger.m4a"
        _ = try await Self.boto3(["put", strangerKey, "a stranger's object"])
        let stranger = folder.write("stranger.m4a", "mine")
        let guarded = try await CLI.run(["push", stranger, "--prefix", prefix, "--db", db], environment: env)
        #expect(guarded.status == 1)
        #expect(guarded.stderr.contains("the key '\(strangerKey)' already holds an object"), "stderr: \(guarded.stderr)")
        #expect(try await Self.boto3(["get", strangerKey]) == "a stranger's object")
        let overwritten = try await CLI.run(["push", stranger, "--prefix", prefix, "--overwrite", "--db", db], environment: env)
        #expect(overwritten.status == 0, "stderr: \(overwritten.stderr)")
        #expect(try await Self.boto3(["get", strangerKey]) == "mine")

        let both = try await CLI.run(["push", track, "--overwrite", "--no-clobber"], environment: env)
        #expect(both.status == 2)
    }

    @Test("two files of one push for one key (NFC and NFD 'Café.mp3'): exit 2, both named, nothing sent")
    func oneKeyTwoFiles() async throws {
        let folder = try TemporaryFolder()
        let nfc = folder.write("Caf\u{E9}.mp3", "composed")
        let nfd = folder.write("Cafe\u{301}.mp3", "decomposed")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("clash")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let run = try await CLI.run(["push", folder.path + "/", "--prefix", prefix, "--db", db], environment: env)
        #expect(run.status == 2)
        let paths = [nfc, nfd].sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(run.stderr == "r2up: \(paths[0]) and \(paths[1]) map to the key '\(prefix)/Caf\u{E9}.mp3' (names that differ only in Unicode normalisation, or a --prefix or --key that folds them together); rename one or change the prefix; nothing was sent\n")
        #expect(try await Self.boto3(["get", prefix + "/Caf\u{E9}.mp3"]) == "MISSING")

        // Two folders' files under one --prefix: the same refusal.
        let other = try TemporaryFolder()
        let twin = other.write("Caf\u{E9}.mp3", "another folder")
        let mixed = try await CLI.run(["push", nfc, twin, "--prefix", prefix, "--db", db], environment: env)
        #expect(mixed.status == 2)
        let pair = [nfc, twin].sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(mixed.stderr.contains("\(pair[0]) and \(pair[1]) map to the key"), "stderr: \(mixed.stderr)")
        #expect(try await Self.boto3(["get", prefix + "/Caf\u{E9}.mp3"]) == "MISSING")
    }

    @Test("sync: a file whose key holds another track's upload is a failure (exit 1), the rest uploads; --overwrite takes it")
    func syncConflict() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let elsewhere = folder.write("01.m4a", "pushed from elsewhere")
        let synced = folder.write("library/01.m4a", "the library's 01")
        _ = folder.write("library/02.m4a", "the library's 02")
        let db = folder.path + "/db.sqlite"
        let prefix = Self.prefix("sync")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        #expect(try await CLI.run(["push", elsewhere, "--prefix", prefix, "--db", db], environment: env).status == 0)

        let sync = try await CLI.run(["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db], environment: env)
        #expect(sync.status == 1)
        #expect(sync.stdout.hasPrefix("sync: 1 uploaded"), "stdout: \(sync.stdout)")
        #expect(sync.stderr.hasPrefix("r2up: \(synced): the key '\(prefix)/01.m4a' holds \(elsewhere) uploaded 20"), "stderr: \(sync.stderr)")
        #expect(try await Self.boto3(["get", prefix + "/01.m4a"]) == "pushed from elsewhere")
        #expect(try await Self.boto3(["get", prefix + "/02.m4a"]) == "the library's 02")

        let overwrite = try await CLI.run(
            ["sync", library, "--prefix", prefix, "--min-age", "0", "--overwrite", "--db", db], environment: env)
        #expect(overwrite.status == 0, "stderr: \(overwrite.stderr)")
        #expect(try await Self.boto3(["get", prefix + "/01.m4a"]) == "the library's 01")
        #expect(try Store(path: db).track(path: elsewhere)?.key == nil)
    }
}
