import Foundation
import Testing
import R2UpTestSupport

/// The two open findings of the mutated runs (docs/development/reliability.md, "Replies mutated
/// at random" and "Soak"): a copy that reached the server while its reply was lost, met again by
/// a later run. The job keeps the mark that it sent that copy to the then empty key, so the next
/// run knows the object there is its own: it takes it (the file unchanged) or replaces it (the
/// file changed). The relay resets every PUT and HEAD reply after the server acted on it.
@Suite("a copy or PUT whose reply was lost, met by the next run", .serialized)
struct CopyMarkTests {
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        var bytes = Data(count: count)
        for index in stride(from: 0, to: count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) &+ seed }
        return bytes
    }

    /// Syncs `library` to the server, renames `old` to `new`, then syncs through a relay that
    /// cuts every PUT and HEAD reply: the copy is made, the run never learns it (exit 1).
    static func copyWithLostReplies(
        _ server: CoreServer, folder: String, old: String, new: String, bytes: Data, sync: [String]
    ) async throws {
        let library = folder + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: library + "/" + old))
        let first = try await CLI.run(sync, environment: server.environment(home: folder))
        #expect(first.status == 0, "stderr: \(first.stderr)")
        try FileManager.default.moveItem(atPath: library + "/" + old, toPath: library + "/" + new)
        let log = folder + "/relay.jsonl"
        let relay = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "PUT,HEAD", "--reset-after", "1.0", "--log-all"], log: log)
        defer { relay.stop() }
        var env = server.environment(home: folder)
        env["R2UP_ENDPOINT"] = relay.endpoint
        let cut = try await CLI.run(sync + ["--retries", "1"], environment: env)
        #expect(cut.status == 1, "stdout: \(cut.stdout) stderr: \(cut.stderr)")
        #expect(IntegrityCommandTests.faults(log, "reset-after") >= 1)
    }

    /// Appends `added` to the file at `path` (holding `before`), then syncs straight to the server:
    /// the run ends 0 with no 412, and `key` holds the file as it is now.
    static func appendThenSync(
        _ server: CoreServer, folder: String, path: String, before: Data, added: Data, key: String, sync: [String]
    ) async throws {
        var after = before
        after.append(added)
        try after.write(to: URL(fileURLWithPath: path))
        let next = try await CLI.run(sync, environment: server.environment(home: folder))
        #expect(next.status == 0, "stdout: \(next.stdout) stderr: \(next.stderr)")
        #expect(!next.stderr.contains("412") && !next.stderr.contains("already holds"), "\(next.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(after)])
    }

    @Test("a copy made, its reply lost, then the file appended: the next sync replaces that copy with the file, no 412")
    func copyThenChanged() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let prefix = "copy-mark/changed-\(UInt32.random(in: 0...UInt32.max))"
        let db = folder.path + "/db.sqlite"
        let sync = ["sync", folder.path + "/lib", "--prefix", prefix, "--min-age", "0", "--db", db]
        let before = Self.bytes(70_000, seed: 3)
        try await Self.copyWithLostReplies(
            server, folder: folder.path, old: "take.flac", new: "take (final).flac", bytes: before, sync: sync)
        let key = prefix + "/take (final).flac"
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(before)], "the copy was made")

        // The file grows before any run learns of the copy: the next sync uploads it over that copy.
        try await Self.appendThenSync(
            server, folder: folder.path, path: folder.path + "/lib/take (final).flac", before: before,
            added: Self.bytes(10_000, seed: 9), key: key, sync: sync)
        let history = try await CLI.run(["history", "--db", db], environment: server.environment(home: folder.path))
        let rows = history.stdout.split(separator: "\n").filter { $0.contains(key) }
        #expect(rows.count == 1 && rows.first?.contains("(copy of") == false, "\(history.stdout)")
    }

    @Test("a new file's PUT stored, its reply lost, then the file appended: the next sync replaces it, no 412 (the soak's 'already holds')")
    func putThenChanged() async throws {
        let server = try CoreServer.named(CoreServer.seaweedFS)
        let folder = try TemporaryFolder()
        let prefix = "copy-mark/put-\(UInt32.random(in: 0...UInt32.max))"
        let db = folder.path + "/db.sqlite"
        let library = folder.path + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let sync = ["sync", library, "--prefix", prefix, "--min-age", "0", "--db", db]
        let before = Self.bytes(60_000, seed: 4)
        try before.write(to: URL(fileURLWithPath: library + "/take.flac"))
        // Every PUT and HEAD reply cut after the server acted: the PUT is stored, the run never learns it.
        let log = folder.path + "/relay.jsonl"
        let relay = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "PUT,HEAD", "--reset-after", "1.0", "--log-all"], log: log)
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = relay.endpoint
        let cut = try await CLI.run(sync + ["--retries", "1"], environment: env)
        relay.stop()
        #expect(cut.status == 1, "stdout: \(cut.stdout) stderr: \(cut.stderr)")
        let key = prefix + "/take.flac"
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(before)], "the PUT was stored")

        // The file grows before any run learns of that PUT: the next sync uploads it over it.
        try await Self.appendThenSync(
            server, folder: folder.path, path: library + "/take.flac", before: before, added: Self.bytes(9_000, seed: 8),
            key: key, sync: sync)
        let queue = try await CLI.run(["queue", "--json", "--db", db], environment: server.environment(home: folder.path))
        #expect(queue.stdout.contains("\"failed\" : 0"), "\(queue.stdout)")
    }

    @Test("a copy of a multipart track whose reply was lost, retried by the next run on a server whose copy gets a new ETag (moto): taken, no 412")
    func copyRetriedByNextRun() async throws {
        let server = try CoreServer.named(CoreServer.moto)
        let folder = try TemporaryFolder()
        let prefix = "copy-mark/next-run-\(UInt32.random(in: 0...UInt32.max))"
        let db = folder.path + "/db.sqlite"
        let sync = ["sync", folder.path + "/lib", "--prefix", prefix, "--min-age", "0", "--db", db, "--part-size", "5M"]
        let bytes = Self.bytes(11 << 20, seed: 5)
        try await Self.copyWithLostReplies(
            server, folder: folder.path, old: "mix.flac", new: "mix (final).flac", bytes: bytes, sync: sync)
        let key = prefix + "/mix (final).flac"
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)], "the copy was made")

        // The failed job waits out its backoff; `retry` runs it now, in a new run.
        let next = try await CLI.run(["retry", "--all", "--db", db], environment: server.environment(home: folder.path))
        #expect(next.status == 0, "stdout: \(next.stdout) stderr: \(next.stderr)")
        #expect(!next.stderr.contains("412") && !next.stderr.contains("already holds"), "\(next.stderr)")
        #expect(try await server.stored(under: key) == [key: TwoServerCoreTests.fingerprint(bytes)])
        let history = try await CLI.run(["history", "--db", db], environment: server.environment(home: folder.path))
        let rows = history.stdout.split(separator: "\n").filter { $0.contains(key) }
        #expect(rows.count == 1 && rows.first?.hasSuffix("(copy of \(prefix)/mix.flac)") == true, "\(history.stdout)")
    }
}
