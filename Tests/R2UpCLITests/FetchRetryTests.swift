import Foundation
import Testing

/// `r2up retry --all` after a failed fetch: the same checks as `r2up fetch`, against the real server.
@Suite("r2up retry of a failed fetch", .serialized)
struct FetchRetryTests {
    @Test("an object replaced since the upload is refused again by retry --all (same line, exit 1, no file); restored, it is fetched")
    func replacedThenRestored() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a", "02.m4a"])
        let path = lib.dir + "/01.m4a"
        let key = lib.prefix + "01.m4a"
        let mtime = try StatusFiles.mtimeNs(path)
        let offload = try await CLI.run(lib.r2up(["offload", path]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        // Other bytes of the same size behind r2up's back: only the ETag (and digest) tell.
        try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=b'XXXXXX')", [key])
        let refused = "r2up: \(path): its object '\(key)' was replaced since its upload (the ETag is not the recorded one); nothing fetched"

        let fetch = try await CLI.run(lib.r2up(["fetch", path]), environment: lib.env)
        #expect(fetch.status == 1, "stderr: \(fetch.stderr)")
        #expect(fetch.stderr.split(separator: "\n").first.map(String.init) == refused, "\(fetch.stderr)")
        let failed = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(failed.stdout)[path] == "downloadError", "the failed fetch is recorded: \(failed.stdout)")

        let retry = try await CLI.run(lib.r2up(["retry", "--all"]), environment: lib.env)
        #expect(retry.status == 1, "stderr: \(retry.stderr)")
        #expect(retry.stderr == refused + "\n")
        #expect(retry.stdout.isEmpty, "\(retry.stdout)")
        #expect(try PullFixtures.files(under: lib.dir) == ["02.m4a"], "nothing at the track's path, no partial file")
        #expect(try await OffloadFixtures.objectText(key) == "XXXXXX", "the bucket is left as it is")
        let still = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(still.stdout)[path] == "downloadError", "\(still.stdout)")

        // The original bytes back in the bucket: the recorded ETag and digest match again.
        try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=a[1].encode())", [key, "01.m4a"])
        let again = try await CLI.run(lib.r2up(["retry", "--all"]), environment: lib.env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(again.stdout == path + "\n")
        #expect(PullFixtures.text(path) == "01.m4a")
        #expect(try StatusFiles.mtimeNs(path) == mtime, "its mtime of upload back")
        #expect(try PullFixtures.files(under: lib.dir) == ["01.m4a", "02.m4a"])
        let status = try await CLI.run(lib.r2up(["status", lib.dir, "--json"]), environment: lib.env)
        #expect(try PullFixtures.icons(status.stdout)[path] == "downloaded", "\(status.stdout)")
        let nothing = try await CLI.run(lib.r2up(["retry", "--all"]), environment: lib.env)
        #expect(nothing.status == 0)
        #expect(nothing.stderr.hasPrefix("Nothing to retry"), "\(nothing.stderr)")
    }

    @Test("a file put at a failed fetch's path is never fetched over by retry --all: one line, exit 0, its bytes kept")
    func fileOnDisk() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["01.m4a"])
        let path = lib.dir + "/01.m4a"
        let offload = try await CLI.run(lib.r2up(["offload", path]), environment: lib.env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0])", [lib.prefix + "01.m4a"])
        let fetch = try await CLI.run(lib.r2up(["fetch", path]), environment: lib.env)
        #expect(fetch.status == 1, "stderr: \(fetch.stderr)")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path))
        let retry = try await CLI.run(lib.r2up(["retry", "--all"]), environment: lib.env)
        #expect(retry.status == 0, "stderr: \(retry.stderr)")
        #expect(retry.stderr == "r2up: \(path): a file is at its path; not fetched over (see r2up status)\n")
        #expect(PullFixtures.text(path) == "mine")
    }

    @Test(
        "a pulled track offloaded before schema v10 is retried as a fetch after the upgrade: an object replaced since is refused, not pulled",
        arguments: [false, true])
    func pulledOffloadedBeforeV10(upgradeAfterFailedFetch: Bool) async throws {
        let folder = try TemporaryFolder()
        let prefix = PullFixtures.scratchPrefix("fetch-pulled")
        let key = prefix + "01.m4a"
        try await PullFixtures.put([(key, .text("01.m4a")), (prefix + "02.m4a", .text("02.m4a"))])
        let env = try PullFixtures.env(folder)
        let db = folder.path + "/db.sqlite"
        let dir = folder.path + "/lib"
        let path = dir + "/01.m4a"
        let pull = try await CLI.run(PullFixtures.pull([prefix, dir], folder), environment: env)
        #expect(pull.status == 0, "stderr: \(pull.stderr)")
        let mtime = try StatusFiles.mtimeNs(path)
        let offload = try await CLI.run(["offload", path, "--db", db], environment: env)
        #expect(offload.status == 0, "stderr: \(offload.stderr)")
        // What an offload before v10 left: no mark; v12 not run yet.
        let forget = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.execute("UPDATE tracks SET offloadedETag = NULL")
            c.execute("DELETE FROM grdb_migrations WHERE identifier = 'v12-pulled-offloaded-before-v10'")
            c.commit()
            """
        func upgrade() async throws {
            let reset = try await ProcessRunner.run("/usr/bin/env", ["python3", "-c", forget, db], environment: ProcessInfo.processInfo.environment)
            #expect(reset.status == 0, "\(reset.stderr)")
        }
        if !upgradeAfterFailedFetch { try await upgrade() }
        // Other bytes of the same size behind r2up's back: only the ETag tells.
        try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=b'XXXXXX')", [key])
        let refused = "r2up: \(path): its object '\(key)' was replaced since its upload (the ETag is not the recorded one); nothing fetched"
        let fetch = try await CLI.run(["fetch", path, "--db", db], environment: env)
        #expect(fetch.status == 1, "stderr: \(fetch.stderr)")
        #expect(fetch.stderr.split(separator: "\n").first.map(String.init) == refused, "\(fetch.stderr)")
        // Its failed fetch recorded before the upgrade (a download error, no mark).
        if upgradeAfterFailedFetch { try await upgrade() }

        let retry = try await CLI.run(["retry", "--all", "--db", db], environment: env)
        #expect(retry.status == 1, "stderr: \(retry.stderr)")
        #expect(retry.stderr == refused + "\n")
        #expect(try PullFixtures.files(under: dir) == ["02.m4a"], "the replaced object is not brought back as the track")

        try await OffloadFixtures.boto("s3.put_object(Bucket=b, Key=a[0], Body=a[1].encode())", [key, "01.m4a"])
        let again = try await CLI.run(["retry", "--all", "--db", db], environment: env)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(again.stdout == path + "\n")
        #expect(PullFixtures.text(path) == "01.m4a")
        #expect(try StatusFiles.mtimeNs(path) == mtime, "its mtime of download back")
        let status = try await CLI.run(["status", dir, "--json", "--db", db], environment: env)
        #expect(try PullFixtures.icons(status.stdout)[path] == "downloaded", "\(status.stdout)")
    }
}
