import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import R2UpKit
import Testing

@testable import R2UpServe

/// The gate and the routes through the router `serve` builds, in-process (the fuzz harness
/// `serve-request` drives the same router; these are its seeds' answers, fixed).
@Suite("serve's gate, in-process")
struct GateTests {
    /// A server over an empty store in a temporary folder whose S3 endpoint is a closed port.
    final class Server: Sendable {
        let gate = ServeGate(password: nil, port: 8123)
        let responder: RouterResponder<ServeContext>
        let channel = NIOAsyncTestingChannel()
        let database: String

        init() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("r2up-gate-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            database = folder + "/r2up.sqlite"
            let session = try R2UpSession(
                R2UpSession.Configuration(
                    endpoint: "http://127.0.0.1:1", accessKeyID: "AKID", secretAccessKey: "secret", bucket: "fuzz", databasePath: database))
            let library = Library(session: session, roots: [])
            let options = ServeOptions(host: "127.0.0.1", port: 8123, roots: [])
            let router = ServeServer.router(
                gate: gate, hosts: ServeServer.hosts(options, port: 8123), library: library, feed: LiveFeed(library: library), idle: IdleRelease())
            responder = router.buildResponder()
        }

        func send(_ method: HTTPRequest.Method, _ path: String, host: String = "127.0.0.1:8123", fields: HTTPFields = [:], body: String = "")
            async -> Response
        {
            let head = HTTPRequest(method: method, scheme: "http", authority: host, path: path, headerFields: fields)
            let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(string: body)))
            let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            let context = ServeContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            do { return try await responder.respond(to: request, context: context) } catch let error as any HTTPResponseError {
                return Response(status: error.status)
            } catch { return Response(status: .internalServerError) }
        }

        /// The database file's size and time: a write moves them.
        func storeMark() -> String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: database + "-wal")
            return "\(attributes?[.size] ?? "none") \((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }
    }

    @Test("the one-time token opens one session; a second use, or no cookie, opens nothing")
    func token() async throws {
        let server = try Server()
        let token = try #require(server.gate.startToken)
        let first = await server.send(.get, "/?token=\(token)")
        #expect(first.status == .seeOther && first.headers[.location] == "/")
        let cookie = try #require(first.headers[.setCookie])
        #expect(cookie.hasPrefix("r2up_session_8123=") && cookie.contains("HttpOnly"))
        let again = await server.send(.get, "/?token=\(token)")
        #expect(again.status == .forbidden && again.headers[.setCookie] == nil)
        #expect(await server.send(.get, "/queue").status == .unauthorized)
        let session = String(cookie.dropFirst("r2up_session_8123=".count).prefix { $0 != ";" })
        #expect(await server.send(.get, "/queue", fields: [.cookie: "r2up_session_8123=\(session)"]).status == .ok)
    }

    @Test("a form needs this Host, the session, this Origin and the CSRF token; refused, it changes nothing")
    func forms() async throws {
        let server = try Server()
        let token = try #require(server.gate.startToken)
        let session = try #require(server.gate.redeem(token: token))
        let csrf = try #require(server.gate.csrf(session: session))
        let cookie = "r2up_session_8123=\(session)"
        let job = "action=cancel&job=6F9619FF-8B86-D011-B42D-00C04FC964FF"
        let form = "csrf=\(csrf)&" + job
        let here: HTTPFields = [.cookie: cookie, .origin: "http://127.0.0.1:8123"]
        let before = server.storeMark()
        let refusals: [(host: String, fields: HTTPFields, body: String, status: HTTPResponse.Status)] = [
            ("attacker.example:8123", [.cookie: cookie, .origin: "http://attacker.example:8123"], form, .misdirectedRequest),
            ("127.0.0.1:8123", [.cookie: cookie, .origin: "http://attacker.example"], form, .forbidden),
            ("127.0.0.1:8123", [.cookie: cookie, .referer: "http://127.0.0.1:8123.evil.example/"], form, .forbidden),
            ("127.0.0.1:8123", [.cookie: cookie], form, .forbidden),
            ("127.0.0.1:8123", [.origin: "http://127.0.0.1:8123"], form, .unauthorized),
            ("127.0.0.1:8123", here, job, .forbidden),
            ("127.0.0.1:8123", here, "csrf=%ZZ&action=cancel", .badRequest),
            ("127.0.0.1:8123", here, "csrf=" + String(repeating: "a", count: 65 * 1024), .contentTooLarge),
        ]
        for refusal in refusals {
            let reply = await server.send(.post, "/action", host: refusal.host, fields: refusal.fields, body: refusal.body)
            #expect(reply.status == refusal.status, "\(refusal.host) \(refusal.fields) \(refusal.body.prefix(40))")
        }
        #expect(server.storeMark() == before)
        // With every check passed the form reaches the action: no such upload in this store.
        let reply = await server.send(.post, "/action", fields: here, body: form)
        #expect(reply.status == .notFound)
    }
}
