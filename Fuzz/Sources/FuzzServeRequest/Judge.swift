import HTTPTypes
import Hummingbird

/// The oracle: what the gate and the routes must do with a request, judged from what the
/// harness put in it (never from the server's own checks).
struct Judge {
    let request: ParsedRequest
    let reply: Reply
    /// The server is guarded by a password (else by the one-time token).
    let password: Bool
    /// The Cookie header carries the live session.
    let hasSession: Bool
    /// The input put the session's CSRF token somewhere.
    let hasCSRF: Bool
    /// The input holds the one-time token or the password.
    let hasSecret: Bool

    var hostOK: Bool { request.host.map { world.hosts.contains($0.lowercased()) } ?? false }

    /// Origin, or failing that Referer, names this server.
    var sameOrigin: Bool { Self.sameOrigin(request) }

    static func sameOrigin(_ request: ParsedRequest) -> Bool {
        let origin = "http://" + (request.host ?? "").lowercased()
        if let given = request.origin { return given.lowercased() == origin }
        if let referer = request.referer { return referer.lowercased().hasPrefix(origin + "/") }
        return false
    }

    func check(storeChanged: Bool) {
        let status = reply.status
        let path = request.request.uri.path
        let what = "\(request.method) \(request.path) (host \(request.host ?? "none")) → \(status)"
        precondition((100...599).contains(status), "not an HTTP status: \(what)")
        // A 5xx only for what is not the request's fault: Browse's listing from an S3 that
        // cannot be reached (here: a closed port). A 500 or a 503 (the store) is a finding.
        // (Hummingbird's URI parser drops bytes a target should not hold: "\u{0E}browse" is Browse.)
        if status >= 500 { precondition(status == 502 && path.contains("browse") && hasSession, "a server error: \(what)") }
        if !hostOK { precondition(status == 421, "a request for another host was answered: \(what)") }
        let isPost = request.method == "POST"
        let open = (request.method == "GET" && path.hasPrefix("/assets/")) || (password && path == "/login")
        if !hasSession && !open { precondition(!(200...299).contains(status), "answered without a session: \(what)") }
        precondition(!(isPost && (200...299).contains(status)), "a POST answered with a page: \(what)")
        let location = reply.headers["location"]
        if let location {
            precondition(["/", "/queue", "/history", "/login"].contains(location), "a redirect elsewhere (\(location)): \(what)")
        }
        precondition(reply.headers["set-cookie"] == nil || hasSecret, "a session given without the token or password: \(what)")
        // A POST that was acted on (a redirect back, no new session) needed everything.
        if isPost, status == 303, location != "/login", reply.headers["set-cookie"] == nil {
            precondition(hostOK && hasSession && sameOrigin && hasCSRF, "a POST acted on without its checks: \(what)")
        }
        if isPost && hostOK && !sameOrigin { precondition([401, 403, 303].contains(status), "a POST from elsewhere was not refused: \(what)") }
        if storeChanged {
            precondition(hostOK && hasSession && isPost && sameOrigin && hasCSRF, "the store changed without every check: \(what)")
        }
        // Play sends a served track's bytes and nothing else.
        if path == "/media" && status == 200 { precondition(world.trackBytes.contains(reply.body), "Play sent other bytes: \(what)") }
        // Whatever came from the request is escaped in a page.
        precondition(!contains(reply.body, Array("<x-fuzz".utf8)), "input reached a page unescaped: \(what)")
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
