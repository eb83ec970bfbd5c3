import Foundation
import Testing

/// Issue 26: a run's first writes go out while the reply that names the server is on its way,
/// their bodies held until it comes. A server that ignores `If-None-Match` (MinIO's code in
/// `juicefs gateway`) never gets those bodies: the requests end short, store nothing, and each
/// file is written again after a HEAD of its key. Another writer's object is never replaced.
@Suite("Bodies held until the server is named")
struct HeldBodyTests {
    @Test("juicefs gateway: the held PUTs end without their bodies; a HEAD finds another's object, which is kept; the rest are stored")
    func refusedWhereConditionsAreIgnored() async throws {
        let server = try CoreServer.named(CoreServer.minIO)
        let folder = try TemporaryFolder()
        let prefix = OneBadReplyTests.key("held")
        var expected: [String: String] = [:]
        try FileManager.default.createDirectory(atPath: folder.path + "/album", withIntermediateDirectories: true)
        for index in 1...6 {
            let bytes = TwoServerCoreTests.bytes(40_000 + index, seed: UInt8(index))
            try bytes.write(to: URL(fileURLWithPath: folder.path + "/album/t\(index).bin"))
            expected["\(prefix)/album/t\(index).bin"] = TwoServerCoreTests.fingerprint(bytes)
        }
        // Another writer's object at one key, written straight to the server.
        let other = TwoServerCoreTests.bytes(999, seed: 77)
        try other.write(to: URL(fileURLWithPath: folder.path + "/other.bin"))
        let taken = "\(prefix)/album/t3.bin"
        expected[taken] = TwoServerCoreTests.fingerprint(other)
        let first = try await CLI.run(
            ["push", folder.path + "/other.bin", "--key", taken, "--db", folder.path + "/other.sqlite"],
            environment: server.environment(home: folder.path))
        #expect(first.status == 0, "\(first.stderr)")

        // The naming HEAD's reply is a second late: every file's PUT goes out and holds its body.
        let log = folder.path + "/faults.jsonl"
        let proxy = try await IntegrityCommandTests.proxy(
            server, ["--only-methods", "HEAD", "--script", "1=stall", "--stall-seconds", "1", "--log-all"], log: log)
        defer { proxy.stop() }
        var env = server.environment(home: folder.path)
        env["R2UP_ENDPOINT"] = proxy.endpoint
        let push = try await CLI.run(
            ["push", folder.path + "/album", "--prefix", prefix + "/", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(push.status == 1, "\(push.stderr)")
        #expect(push.stderr.contains("'\(taken)' already holds an object"), "\(push.stderr)")
        #expect(push.stderr.contains("5 uploaded") && push.stderr.contains("1 failed"), "\(push.stderr)")

        let lines = OneBadReplyTests.requests(log)
        let cut = lines.filter { $0.contains("body cut short by the sender") }
        #expect(cut.count == 6, "the six held PUTs ended without a body: \(lines)")
        let heads = lines.filter { $0.contains("\"method\": \"HEAD\"") && $0.contains("/album/t") }
        #expect(heads.count >= 6, "then a HEAD of each key: \(lines)")
        #expect(try await server.stored(under: prefix + "/") == expected)
    }
}
