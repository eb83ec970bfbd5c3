import Foundation
import FuzzSupport
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import R2UpKit
import Synchronization

@testable import R2UpServe

/// What every input shares: a session over a store in a temporary folder (its S3 endpoint is a
/// closed loopback port, so a request that reaches S3 fails at once), its library (one served
/// folder with an album of two tracks not uploaded yet) and live feed.
/// Each input gets a new gate (new token, sessions and login throttle) and a router over it.
final class ServeWorld: Sendable {
    static let port = 8123
    static let password = "fuzz-password"
    let library: Library
    let feed: LiveFeed
    let hosts: Set<String>
    let database: String
    /// The served folder, and the bytes of each track in it (what Play may send).
    let root: String
    let trackBytes: Set<[UInt8]>
    let channel = NIOAsyncTestingChannel()
    let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    init() {
        var template = Array((NSTemporaryDirectory() + "r2up-fuzz-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("cannot make a temporary folder") }
        let folder = String(cString: made)
        database = folder + "/r2up.sqlite"
        let configuration = R2UpSession.Configuration(
            endpoint: "http://127.0.0.1:1", accessKeyID: "AKIDFUZZ", secretAccessKey: "fuzz-secret", bucket: "fuzz",
            databasePath: database)
        let session: R2UpSession
        do { session = try R2UpSession(configuration) } catch { fatalError("cannot open the store: \(error)") }
        // One album folder of two local tracks (never uploaded) under the served root.
        root = folder + "/music"
        let album = root + "/Artist - Album"
        try? FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        var contents: Set<[UInt8]> = []
        for (index, name) in ["01 Song.mp3", "02 Other.flac"].enumerated() {
            let bytes = [UInt8](repeating: UInt8(index + 1), count: 3000)
            _ = FileManager.default.createFile(atPath: album + "/" + name, contents: Data(bytes))
            contents.insert(bytes)
        }
        trackBytes = contents
        library = Library(session: session, roots: [root])
        feed = LiveFeed(library: library)
        hosts = ServeServer.hosts(ServeOptions(host: "127.0.0.1", port: Self.port, roots: [root], hostNames: ["music.local"]), port: Self.port)
    }

    /// The store's files as they stand (size and modification time of the database and its
    /// WAL): a write moves one of them.
    func storeMark() -> [Int64] { fileMark(database) + fileMark(database + "-wal") }

    /// A gate for one input and the router behind it: a password gate with a session already
    /// logged in, or a token gate whose token is unused (`fresh`) or already redeemed for a
    /// session. Made anew when `fresh` (the input may use the token or the password: that opens
    /// sessions and counts wrong passwords), else the one kept for its kind (no input can open a
    /// session on it, and a new gate costs more than most inputs).
    func gate(password: Bool, fresh: Bool) async -> Gate {
        if !fresh, let kept = kept.withLock({ $0[password] }) { return kept }
        let gate = ServeGate(password: password ? Self.password : nil, port: Self.port)
        let token = gate.startToken ?? ""
        let session = password ? await gate.login(password: Self.password) ?? "" : fresh ? "" : gate.redeem(token: token) ?? ""
        let router = ServeServer.router(gate: gate, hosts: hosts, library: library, feed: feed, idle: IdleRelease())
        let made = Gate(gate: gate, token: token, session: session, responder: router.buildResponder())
        if !fresh { kept.withLock { $0[password] = made } }
        return made
    }

    private let kept = Mutex<[Bool: Gate]>([:])

    /// The reply to `request` from the real router behind the real gate, as the server would
    /// send it (an error a handler throws becomes its status; any other error a 500).
    func serve(_ request: Request, through gate: Gate) async -> Reply {
        let responder = gate.responder
        let context = ServeContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            return Reply(status: error.status.code, headers: [:], body: [])
        } catch {
            return Reply(status: 500, headers: [:], body: [])
        }
        // A page's live stream never ends by itself: its first write ends it here.
        let streaming = response.headers[.contentType] == "text/event-stream"
        let taken = Taken()
        var status = response.status.code
        do { try await response.body.write(Collector(limit: streaming ? 0 : 4 << 20, taken: taken)) } catch {
            if !streaming { status = 500 }
        }
        var headers: [String: String] = [:]
        for field in response.headers { headers[field.name.canonicalName, default: ""] += field.value }
        return Reply(status: status, headers: headers, body: taken.bytes.withLock { $0 })
    }
}

/// A gate, its secrets and the router behind it.
struct Gate: Sendable {
    let gate: ServeGate
    /// The one-time token (unused only in a fresh token gate).
    let token: String
    /// A live session, or "" (a fresh token gate).
    let session: String
    let responder: RouterResponder<ServeContext>
}

/// What the harness checks of a reply.
struct Reply: Sendable {
    var status: Int
    /// Lowercased names; repeated fields joined.
    var headers: [String: String]
    var body: [UInt8]
}

/// A reply's body as written.
final class Taken: Sendable {
    let bytes = Mutex<[UInt8]>([])
}

/// Takes a reply's body; past `limit` bytes it stops the body (a live stream's end).
struct Collector: ResponseBodyWriter {
    struct Stop: Error {}
    let limit: Int
    let taken: Taken

    mutating func write(_ buffer: ByteBuffer) async throws {
        let full = taken.bytes.withLock { bytes in
            bytes.append(contentsOf: buffer.readableBytesView)
            return bytes.count > limit
        }
        if full { throw Stop() }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
