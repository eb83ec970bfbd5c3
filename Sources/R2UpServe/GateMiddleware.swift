import Foundation
import Hummingbird

/// Every request passes here first: the Host must be ours (DNS rebinding), the browser must
/// hold a session (from the one-time token or the password), and a POST must carry the
/// session's CSRF token and come from this origin. What it refuses changes nothing.
struct GateMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let gate: ServeGate
    /// Host header values accepted (lowercased).
    let hosts: Set<String>
    /// Told when each request starts and ends.
    let idle: IdleRelease

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        idle.began()
        defer { idle.ended() }
        return try await admit(request, context: context, next: next)
    }

    private func admit(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let host = request.head.authority?.lowercased(), hosts.contains(host) else {
            return Pages.refusal(.misdirectedRequest, "This server answers only to the address r2up serve printed.")
        }
        let query = FormData(Substring(request.uri.query ?? ""))
        if request.method == .get, let token = query?["token"] {
            guard let session = gate.redeem(token: token) else {
                return Pages.refusal(.forbidden, "This link was used already or is wrong: run r2up serve again for a new one.")
            }
            // Always to "/": a path from the request could send the browser elsewhere ("//host").
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(cookie(session))
            return response
        }
        // The style and script hold nothing of the library: the login page needs them too.
        if request.method == .get, request.uri.path.hasPrefix("/assets/") { return try await next(request, context) }
        if request.uri.path == "/login", gate.password != nil {
            return try await login(request, host: host)
        }
        guard let session = request.cookies[gate.cookieName]?.value, let csrf = gate.csrf(session: session) else {
            if gate.password != nil { return Response(status: .seeOther, headers: [.location: "/login"]) }
            return Pages.refusal(.unauthorized, "Open the address r2up serve printed: it carries a one-time token.")
        }
        var context = context
        if request.method == .post {
            guard sameOrigin(request, host: host) else { return Pages.refusal(.forbidden, "Refused: the form did not come from this page.") }
        }
        context.session = session
        context.csrf = csrf
        return try await next(request, context)
    }

    /// The browser says where a POST came from: Origin, or failing that Referer.
    func sameOrigin(_ request: Request, host: String) -> Bool {
        let origin = "http://" + host
        if let given = request.headers[.origin] { return given.lowercased() == origin }
        if let referer = request.headers[.referer] { return referer.lowercased().hasPrefix(origin + "/") }
        return false
    }

    func cookie(_ session: String) -> Cookie {
        Cookie(name: gate.cookieName, value: session, path: "/", httpOnly: true, sameSite: .strict)
    }

    /// The password form (GET) and its check (POST); ten wrong passwords a minute slow the next.
    func login(_ request: Request, host: String) async throws -> Response {
        guard request.method == .post else { return Pages.html(Pages.login(failed: false)) }
        guard sameOrigin(request, host: host) else { return Pages.refusal(.forbidden, "Refused: the form did not come from this page.") }
        var request = request
        let body = try await request.collectBody(upTo: Pages.maxBody)
        guard let form = FormData(Substring(String(buffer: body))), let password = form["password"] else {
            return Pages.refusal(.badRequest, "The form could not be read.")
        }
        guard let session = await gate.login(password: password) else {
            return Pages.html(Pages.login(failed: true), status: .unauthorized)
        }
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(cookie(session))
        return response
    }
}

/// A request's context: the session the gate found for it and that session's CSRF token.
struct ServeContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var session = ""
    var csrf = ""

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
