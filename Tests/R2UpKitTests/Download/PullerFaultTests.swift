import Foundation
import Testing
import R2UpTransfer
@testable import R2UpKit
@testable import R2UpStore
import R2UpTestSupport

/// The library's pull through tools/faultproxy.py: damaged GETs are retried part by part.
@Suite("Puller under faults")
struct PullerFaultTests {
    @Test("ranged GETs truncated, reset and answered 503 are retried; the file matches, no temporary file is left")
    func retriedParts() async throws {
        let server = try TestServer.require()
        let directory = try TestDirectory()
        let source = directory.path + "/source.bin"
        let made = try await Subprocess.run("/bin/sh", ["-c", "head -c \(30 << 20) /dev/urandom > '\(source)'"])
        #expect(made.status == 0)
        let prefix = server.scratchPrefix("puller-faults")
        _ = try await server.service().upload(PushRequest(path: source, key: prefix + "track.bin", attributes: .init()))

        // GET 1 is the listing; 2-5 are the four 8 MiB ranges (the first three get a fault each).
        let proxy = try await FaultProxy(
            server: server, arguments: ["--log-all", "--only-methods", "GET", "--script", "2=truncate,3=reset-before,4=error:503"])
        let puller = Puller(service: try server.service(endpoint: proxy.endpoint), store: nil)
        let plan = try await puller.plan(prefix)
        #expect(plan.items.map(\.key) == [prefix + "track.bin"])
        let destination = directory.path + "/dest"
        let summary = await puller.run(plan.items, destination: try Puller.prepareDestination(destination))
        #expect(summary.failures.isEmpty, "\(summary.failures.map { $0.error.description })")
        #expect(summary.outcomes.map(\.result) == [.downloaded])

        let faults = proxy.injectedFaults().compactMap { $0["fault"] as? String }
        #expect(Set(faults) == ["truncate", "reset-before", "error"])
        let sums = try await Subprocess.run("/usr/bin/sha256sum", [source, destination + "/track.bin"])
        let lines = sums.stdoutText.split(separator: "\n").map { $0.prefix(64) }
        #expect(lines.count == 2 && lines[0] == lines[1])
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["track.bin"])
    }
}
