// libFuzzer harness: `r2up serve`'s own request handling — the gate (Host, session cookie,
// one-time token, password login, Origin/Referer of a POST), the router, the query and form
// decoding, the CSRF check and every route's checks of what it was given — driven in-process
// through the real router (no socket). Input: an HTTP/1.1 request as text (request line,
// header lines, a blank line, the body), read leniently; what NIO's parser would refuse before
// our code sees it (a bad method or header name) is skipped. Placeholders put in what the
// fuzzer cannot guess: {session} (a live session id), {csrf} (its CSRF token), {token} (the
// unused one-time token), {password}, {root} (the served folder), {64k} (65,537 bytes, past
// the body limit), {length} (the body's length). A first line `#password` runs the input
// against a password-guarded server. Build and run: scripts/fuzz.sh serve-request.
import Dispatch
import FuzzSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

@testable import R2UpServe

let world = ServeWorld()
/// A body one byte past serve's limit.
let pastLimit = String(repeating: "a", count: Pages.maxBody + 1)
/// FUZZ_TRACE=1: print each request's reply (replaying a corpus by hand); 2: its body too.
let trace = ["1", "2"].contains(ProcessInfo.processInfo.environment["FUZZ_TRACE"])
let verbose = ProcessInfo.processInfo.environment["FUZZ_TRACE"] == "2"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let done = DispatchSemaphore(value: 0)
    Task {
        await check(bytes)
        done.signal()
    }
    done.wait()
    return 0
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzServeRequest_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}

/// Serves one input and checks the reply against what the gate must do.
func check(_ input: [UInt8]) async {
    var text = String(decoding: input, as: UTF8.self)
    let password = text.hasPrefix("#password\n") || text.hasPrefix("#password\r\n")
    if password { text = String(text.drop { $0 != "\n" }.dropFirst()) }
    let usesToken = text.contains("{token}")
    let fresh = usesToken || text.contains("{password}") || (password && text.contains("login"))
    let made = await world.gate(password: password, fresh: fresh)
    let (gate, token, session) = (made.gate, made.token, made.session)
    let csrf = gate.csrf(session: session) ?? ""
    let usesSession = text.contains("{session}") && !session.isEmpty
    let usesCSRF = text.contains("{csrf}") && usesSession
    if text.contains("{") {
        text = text.replacingOccurrences(of: "{session}", with: session).replacingOccurrences(of: "{csrf}", with: csrf)
            .replacingOccurrences(of: "{token}", with: token).replacingOccurrences(of: "{password}", with: ServeWorld.password)
            .replacingOccurrences(of: "{64k}", with: pastLimit).replacingOccurrences(of: "{root}", with: world.root)
    }
    // {length}: the body's length in bytes, as a browser's Content-Length says it.
    let length = ParsedRequest.split(text).1.utf8.count
    text = text.replacingOccurrences(of: "{length}", with: String(length))
    guard let parsed = ParsedRequest(text) else { return }
    // An upload, download or offload that passes its checks would start S3 work (a push tries
    // for seconds against the closed port): the harness stops before it, at the form it sends.
    let passes = usesCSRF && parsed.cookies.contains { $0.contains(session) } && parsed.body.count <= Pages.maxBody
    if passes, Judge.sameOrigin(parsed), parsed.host.map({ world.hosts.contains($0.lowercased()) }) == true,
        parsed.method == "POST", let form = FormData(Substring(String(decoding: parsed.body, as: UTF8.self))),
        let action = form["action"], ["upload", "upload-all", "download", "offload"].contains(action)
    {
        return
    }
    let before = world.storeMark()
    let reply = await world.serve(parsed.request, through: made)
    let changed = world.storeMark() != before
    if trace {
        let shown = "\(parsed.method) \(parsed.path) (path \(parsed.request.uri.path)) [\(parsed.request.head.authority ?? "-")] → "
            + "\(reply.status) \(reply.headers["location"] ?? "") \(reply.body.count) bytes"
        // Standard error: unbuffered, so a reply shows even when its check then traps.
        var text = shown + (changed ? " (store changed)" : "") + "\n"
        if verbose { text += String(decoding: reply.body.prefix(2000), as: UTF8.self) + "\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }
    let judge = Judge(
        request: parsed, reply: reply, password: password, hasSession: usesSession && parsed.cookies.contains { $0.contains(session) },
        hasCSRF: usesCSRF, hasSecret: usesToken || text.contains(ServeWorld.password))
    judge.check(storeChanged: changed)
}

/// The request an input makes, as NIO's HTTP/1 decoder and its HTTP-types conversion would hand
/// it over: the Host header becomes the authority.
struct ParsedRequest {
    var request: Request
    var method: String
    var path: String
    var host: String?
    var origin: String?
    var referer: String?
    var body: [UInt8]
    /// Every `name=value` pair of the Cookie headers, trimmed.
    var cookies: Set<String>

    init?(_ text: String) {
        let (head, rest) = Self.split(text)
        // "\r\n" is one Character in Swift: lines end at either.
        var lines = head.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        guard !lines.isEmpty else { return nil }
        let start = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard let verb = start.first, let method = HTTPRequest.Method(String(verb)) else { return nil }
        let target = start.count > 1 ? String(start[1]) : "/"
        var fields = HTTPFields()
        var host: String?
        cookies = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name.canonicalName == "host" {
                if host == nil { host = value }
                continue
            }
            fields.append(HTTPField(name: name, value: value))
            if name == .cookie { cookies.formUnion(value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) }
        }
        body = Array(rest.utf8)
        // A body ends where its Content-Length says (a longer one would be the next request).
        if let length = fields[.contentLength].flatMap({ Int($0) }), length >= 0, length < body.count { body = Array(body[..<length]) }
        self.method = method.rawValue
        path = target
        let requestHead = HTTPRequest(method: method, scheme: "http", authority: host, path: target, headerFields: fields)
        request = Request(head: requestHead, body: RequestBody(buffer: ByteBuffer(bytes: body)))
        // As the server sees them: HTTP types make a field's value legal (no CR, LF or NUL).
        self.host = requestHead.authority
        origin = requestHead.headerFields[.origin]
        referer = requestHead.headerFields[.referer]
    }

    /// The head and the body: they part at the first empty line.
    static func split(_ text: String) -> (Substring, Substring) {
        let ends = ["\r\n\r\n", "\n\n"].compactMap { text.range(of: $0) }
        guard let first = ends.min(by: { $0.lowerBound < $1.lowerBound }) else { return (text[...], "") }
        return (text[..<first.lowerBound], text[first.upperBound...])
    }
}
