import Foundation
import SigV4
import Testing
import R2UpTestSupport
@testable import R2UpTransfer

/// The curl engine's behaviour on the wire: connection reuse, cancellation, limits, timeouts,
/// and how network failures are classified.
@Suite("TransferEngine on the wire")
struct TransferEngineTests {
    static func client(_ server: TestServer, endpoint: String, options: TransferEngine.Options = .init()) throws -> S3Client {
        S3Client(
            endpoint: try S3Endpoint(url: endpoint), region: "us-east-1",
            credentials: Credentials(accessKeyID: server.accessKey, secretAccessKey: server.secretKey),
            engine: try TransferEngine(options: options))
    }

    /// The TransferError inside an error, whichever layer threw it.
    static func transferError(_ error: any Error) -> TransferError? {
        if let error = error as? TransferError { return error }
        if case .transfer(let inner)? = error as? S3ClientError { return inner }
        return nil
    }

    @Test("20 sequential requests share one connection")
    func connectionReuse() async throws {
        let server = try TestServer.require()
        let proxy = try await FaultProxy(server: server, arguments: ["--log-all"])
        let client = try Self.client(server, endpoint: proxy.endpoint)
        defer { client.engine.shutdown() }
        let scope = server.scratchPrefix("reuse")
        for index in 0..<10 {
            let key = scope + "k\(index)"
            _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes([UInt8(index)]), contentMD5: nil)
            #expect(try await client.headObject(bucket: server.bucket, key: key)?.size == 1)
        }
        // Requests only (the log also has a "start" event).
        let records = proxy.injectedFaults(includingClean: true).filter { $0["method"] != nil }
        #expect(records.count == 20, "\(records)")
        #expect(records.compactMap { $0["method"] as? String } == Array(repeating: ["PUT", "HEAD"], count: 10).flatMap { $0 })
        let connections = Set(records.compactMap { $0["conn"] as? Int })
        #expect(connections.count == 1, "connections used: \(connections.sorted())")
    }

    @Test("cancelling the task ends a slow PUT within seconds, not the minutes it would take")
    func cancellation() async throws {
        let server = try TestServer.require()
        let proxy = try await FaultProxy(server: server, arguments: ["--script", "1=trickle", "--trickle-bps", "20000"])
        let client = try Self.client(server, endpoint: proxy.endpoint)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("cancel") + "slow.bin"
        let body = [UInt8](repeating: 0x5A, count: 4 << 20)
        let task = Task {
            try await client.putObject(bucket: server.bucket, key: key, body: .bytes(body), contentMD5: nil)
        }
        try await Task.sleep(for: .milliseconds(500))
        let clock = ContinuousClock()
        let started = clock.now
        task.cancel()
        let result = await task.result
        let elapsed = clock.now - started
        // The trickle would take 200 s; the bound leaves room for a loaded two-core CI machine.
        #expect(elapsed < .seconds(15), "took \(elapsed) to stop")
        switch result {
        case .success:
            Issue.record("a 4 MiB PUT at 20 kB/s finished in 0.5 s")
        case .failure(let error):
            let cancelled = error is CancellationError || Self.transferError(error)?.kind == .cancelled
            #expect(cancelled, "threw \(error)")
        }
        #expect(try await client.headObject(bucket: server.bucket, key: key) == nil)
    }

    @Test("a reply larger than the memory limit fails with responseTooLarge")
    func responseTooLarge() async throws {
        let server = try TestServer.require()
        let client = try Self.client(server, endpoint: server.endpoint)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("too-large") + "big.bin"
        _ = try await client.putObject(
            bucket: server.bucket, key: key, body: .bytes([UInt8](repeating: 1, count: 200_000)), contentMD5: nil)
        let url = try client.presignedURL(bucket: server.bucket, key: key, expires: 60)

        let small = HTTPRequest(method: "GET", url: url, sink: .memory(limit: 100_000))
        await #expect {
            _ = try await client.engine.perform(small)
        } throws: { error in
            (error as? TransferError)?.kind == .responseTooLarge
        }
        // At the limit exactly it fits.
        let exact = try await client.engine.perform(HTTPRequest(method: "GET", url: url, sink: .memory(limit: 200_000)))
        #expect(exact.status == 200)
        #expect(exact.body.count == 200_000)
    }

    @Test("a stalled reply is abandoned after the low-speed time, as a timeout")
    func lowSpeedTimeout() async throws {
        let server = try TestServer.require()
        let proxy = try await FaultProxy(server: server, arguments: ["--script", "1=stall", "--stall-seconds", "60"])
        var options = TransferEngine.Options()
        options.lowSpeedTimeSeconds = 2
        let client = try Self.client(server, endpoint: proxy.endpoint, options: options)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("stall") + "x.bin"
        let clock = ContinuousClock()
        let started = clock.now
        do {
            _ = try await client.putObject(bucket: server.bucket, key: key, body: .bytes([1, 2, 3]), contentMD5: nil)
            Issue.record("the stalled PUT succeeded")
        } catch {
            #expect(Self.transferError(error)?.kind == .timeout, "threw \(error)")
        }
        let elapsed = clock.now - started
        // Far below the 60 s stall, with room for a loaded two-core CI machine.
        #expect(elapsed < .seconds(30), "took \(elapsed)")
        #expect(elapsed >= .seconds(2), "gave up before the low-speed time: \(elapsed)")
        #expect(proxy.injectedFaults().compactMap { $0["fault"] as? String } == ["stall"])
    }

    @Test("a closed port is connectionRefused")
    func connectionRefused() async throws {
        let port = try Self.closedPort()
        let engine = try TransferEngine()
        defer { engine.shutdown() }
        await #expect {
            _ = try await engine.perform(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/bucket/key"))
        } throws: { error in
            (error as? TransferError)?.kind == .connectionRefused
        }
    }

    @Test("an unresolvable host is dnsFailure")
    func dnsFailure() async throws {
        let engine = try TransferEngine()
        defer { engine.shutdown() }
        await #expect {
            _ = try await engine.perform(HTTPRequest(method: "GET", url: "http://no-such-host.invalid/bucket/key"))
        } throws: { error in
            (error as? TransferError)?.kind == .dnsFailure
        }
    }

    @Test("handles reused after failed transfers switch between a 1 KiB (PUT, HEAD) and a 16 KiB (GET) receive buffer")
    func receiveBufferOnReusedHandles() async throws {
        let server = try TestServer.require()
        // One request at a time: each takes the handle the one before it left.
        let client = try Self.client(server, endpoint: server.endpoint)
        defer { client.engine.shutdown() }
        let key = server.scratchPrefix("rcvbuf") + "obj"
        let bytes = (0..<(100 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for round in 0..<3 {
            // A failure leaves curl holding the handle's receive buffer: it refuses a new size there.
            await #expect(throws: (any Error).self) {
                _ = try await client.engine.perform(HTTPRequest(method: round == 1 ? "PUT" : "GET", url: "http://no-such-host.invalid/b/k"))
            }
            let etag = try await client.putObject(bucket: server.bucket, key: key, body: .bytes(bytes), contentMD5: nil)
            #expect(try await client.headObject(bucket: server.bucket, key: key)?.etag == etag)
            let fetched = try await client.getObject(bucket: server.bucket, key: key, sink: .memory(limit: 1 << 20))
            #expect(fetched.body == bytes, "round \(round)")
        }
    }

    @Test("a PUT whose kept-alive connection dies after the whole body went out is sent again whole (curl's freed upload buffer comes back)")
    func resendAfterBodySent() async throws {
        let server = try TestServer.require()
        let proxy = try await FaultProxy(
            server: server, arguments: ["--log-all", "--only-methods", "PUT", "--script", "2=reset-before"])
        let client = try Self.client(server, endpoint: proxy.endpoint)
        defer { client.engine.shutdown() }
        let scope = server.scratchPrefix("resend")
        _ = try await client.putObject(bucket: server.bucket, key: scope + "first", body: .bytes([1]), contentMD5: nil)
        // The second PUT goes on the first one's connection; the proxy resets it once the request
        // is in. curl then sends it again on a new connection, from the body's start.
        let bytes = (0..<(8 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        _ = try await client.putObject(bucket: server.bucket, key: scope + "second", body: .bytes(bytes), contentMD5: nil)
        let fetched = try await client.getObject(bucket: server.bucket, key: scope + "second", sink: .memory(limit: 1 << 20))
        #expect(fetched.body == bytes)
        let puts = proxy.injectedFaults(includingClean: true).filter { $0["method"] as? String == "PUT" }
        #expect(puts.count == 3, "\(puts)")
        #expect(puts.compactMap { $0["fault"] as? String }.contains("reset-before"), "\(puts)")
    }

    @Test("a 5 MiB PUT is sent without Expect: 100-continue")
    func noExpectContinue() async throws {
        let sink = try await HeaderSink()
        let engine = try TransferEngine()
        defer { engine.shutdown() }
        let body = [UInt8](repeating: 0xA5, count: 5 << 20)
        let response = try await engine.perform(
            HTTPRequest(method: "PUT", url: sink.endpoint + "/bucket/key", headers: [("Content-Type", "audio/mp4")], body: .bytes(body)))
        #expect(response.status == 200)
        let requests = sink.requests()
        #expect(requests.count == 1)
        let headers = (requests.first?["headers"] as? [[String]] ?? []).map { $0.map { $0.lowercased() } }
        #expect(headers.contains(["content-length", String(5 << 20)]))
        #expect(headers.contains(["content-type", "audio/mp4"]))
        #expect(!headers.contains { $0.first == "expect" }, "headers: \(headers)")
        #expect(requests.first?["received"] as? Int == 5 << 20)
    }

    /// A loopback port nothing listens on: bound, read back, then closed.
    static func closedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw TestSetupError("bind failed") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1 that answers 200 to any PUT and records its headers,
/// stopped by PID when released.
private final class HeaderSink: @unchecked Sendable {
    let process: Process
    let endpoint: String
    let logPath: String

    static let script = """
        import http.server, json, sys
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_PUT(self):
                headers = [[k, v] for k, v in self.headers.items()]
                length = int(self.headers.get("Content-Length", "0"))
                got = 0
                while got < length:
                    chunk = self.rfile.read(min(65536, length - got))
                    if not chunk:
                        break
                    got += len(chunk)
                with open(sys.argv[1], "a") as log:
                    log.write(json.dumps({"headers": headers, "received": got}) + "\\n")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        print("PORT", server.server_address[1], flush=True)
        server.serve_forever()
        """

    init() async throws {
        logPath = FileManager.default.temporaryDirectory.path + "/headersink-\(UUID().uuidString).jsonl"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, logPath]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = try await firstLine(of: out)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSetupError("header sink did not start: '\(text)'")
        }
        endpoint = "http://127.0.0.1:\(port)"
    }

    func requests() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

@Suite("TransferEngine's TLS trust")
struct TransferEngineTrustTests {
    @Test("libcurl's built-in CA file is found (what curl-config names), so the default trust is parsed once a run")
    func builtInCAFile() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "curl-config --ca"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let named = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let file = named.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(!file.isEmpty, "libcurl was built with no CA file on this machine")
        #expect(CurlRuntime.builtInCAFile == file)
    }
}
