#if os(Linux)
import Foundation
import Testing

/// Issue 26 over HTTPS, as every R2 user runs: many connections at once must not each parse the
/// CA bundle. With a CA directory beside the file (Debian's curl default) curl 7.87+ cannot cache
/// the parsed store, and 256 connections took 277 MB and 7.5 s of CPU before the first byte.
@Suite("HTTPS connections")
struct TLSConnectionTests {
    @Test("32 connections at once read a system-sized CA bundle once or twice, not once each")
    func bundleReadOncePerRun() async throws {
        let folder = try TemporaryFolder()
        let server = try CLI.serverEnvironment()
        let tls = try await TLSFixture.start(in: folder.path, upstream: server["R2UP_ENDPOINT"] ?? "")
        defer { tls.server.stop() }
        // The system's bundle and the test CA: as big as what a user's run parses.
        let system = (try? Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"))) ?? Data()
        let bundle = folder.path + "/bundle.pem"
        try (system + Data(contentsOf: URL(fileURLWithPath: tls.caFile))).write(to: URL(fileURLWithPath: bundle))
        try FileManager.default.createDirectory(atPath: folder.path + "/album", withIntermediateDirectories: true)
        for index in 1...40 { _ = folder.write("album/t\(index).bin", String(repeating: "x", count: 1_000 + index)) }

        let opens = try FileOpenCounter(path: bundle)
        let run = try await CLI.run(
            ["push", folder.path + "/album", "--prefix", "tls-\(UInt32.random(in: 0...UInt32.max))/", "--concurrency", "32",
             "--endpoint", tls.server.endpoint, "--ca-bundle", bundle, "--db", folder.path + "/db.sqlite"],
            environment: CLI.environment(server: server, home: folder.path))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").count == 40, "\(run.stdout)")
        // One parse for the run's connections (and one more where the engine renews its
        // connection cache), not one for each of the 32.
        let count = opens.count()
        #expect(count >= 1 && count <= 2, "the bundle was opened \(count) times")
    }
}

/// Counts the opens of one file with inotify; opens and closes alternate in the queue, so the
/// kernel never merges two opens into one event.
final class FileOpenCounter: @unchecked Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0, inotify_add_watch(descriptor, path, UInt32(IN_OPEN | IN_CLOSE_NOWRITE | IN_CLOSE_WRITE)) >= 0 else {
            throw HarnessError("inotify could not watch \(path)")
        }
    }

    deinit { close(descriptor) }

    /// Opens seen so far.
    func count() -> Int {
        var opens = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard got > 0 else { return opens }
            // struct inotify_event: wd, mask, cookie, len (4 bytes each, native order), then the name.
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= got {
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & UInt32(IN_OPEN) != 0 { opens += 1 }
                    offset += 16 + length
                }
            }
        }
    }
}
#endif
