import Foundation
import Testing
import R2UpTestSupport
@testable import R2UpTransfer

/// Keep-alive connections of a long-lived engine (`watch`, `serve`): reused within a burst,
/// closed once idle, without waiting for a new request (issue 28, the soak's descriptors).
@Suite("TransferEngine idle connections")
struct IdleConnectionTests {
    /// This process's TCP sockets connected to `port` on loopback (/proc/self/net/tcp by inode).
    static func sockets(to port: Int) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var inodes = Set<String>()
        for fd in fds {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                link.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(link.dropFirst(8).dropLast()))
        }
        let remote = String(format: ":%04X", port)
        var count = 0
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: a /proc file says it is empty (size 0) to a reader that trusts stat.
            let text = FileHandle(forReadingAtPath: table).map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
                guard fields.count > 9, fields[2].hasSuffix(remote), inodes.contains(String(fields[9])) else { continue }
                count += 1
            }
        }
        return count
    }

    @Test("connections idle for the idle time are closed with no new request; within it they are reused")
    func idleConnectionsClose() async throws {
        let server = try TestServer.require()
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        var options = TransferEngine.Options()
        options.idleConnectionMilliseconds = 2_000
        let client = try TransferEngineTests.client(server, endpoint: proxy.endpoint, options: options)
        defer { client.engine.shutdown() }
        let port = try #require(Int(proxy.endpoint.split(separator: ":").last ?? ""))
        let scope = server.scratchPrefix("idle")
        // A burst of four at once: four connections.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    _ = try await client.putObject(
                        bucket: server.bucket, key: scope + "k\(index)", body: .bytes([UInt8](repeating: 7, count: 200_000)),
                        contentMD5: nil)
                }
            }
            try await group.waitForAll()
        }
        let open = Self.sockets(to: port)
        #expect(open >= 2, "sockets after the burst: \(open)")
        // Within the idle time: the next request takes a connection of the burst.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await client.headObject(bucket: server.bucket, key: scope + "k0")?.size == 200_000)
        var records = proxy.injectedFaults(includingClean: true).filter { $0["method"] != nil }
        let burst = Set(records.prefix(4).compactMap { $0["conn"] as? Int })
        #expect(records.count == 5 && records.last.flatMap { $0["conn"] as? Int }.map(burst.contains) == true, "\(records)")

        // Idle past the limit, no request: every socket closed (the loop looks at least once a second).
        let deadline = ContinuousClock.now + .seconds(6)
        while Self.sockets(to: port) > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(Self.sockets(to: port) == 0, "sockets still open after 2 s idle: \(Self.sockets(to: port))")

        // The engine still works: a new connection.
        #expect(try await client.headObject(bucket: server.bucket, key: scope + "k1")?.size == 200_000)
        records = proxy.injectedFaults(includingClean: true).filter { $0["method"] != nil }
        #expect(records.count == 6 && records.last.flatMap { $0["conn"] as? Int }.map(burst.contains) == false, "\(records)")
        #expect(Self.sockets(to: port) == 1)
    }
}
