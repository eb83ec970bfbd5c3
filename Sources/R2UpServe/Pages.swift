import Foundation
import Hummingbird

/// Responses every route shares: a page, a refusal, the headers that keep a page to itself.
enum Pages {
    /// The largest form body read (a path and two tokens need far less).
    static let maxBody = 64 * 1024

    /// No other origin may frame, script or post into the pages; nothing is cached.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: policy(media: "'self'"),
        .init("X-Content-Type-Options")!: "nosniff",
        .init("Referrer-Policy")!: "same-origin",
        .cacheControl: "no-store",
    ]

    static func policy(media: String) -> String {
        "default-src 'self'; img-src 'self' data:; media-src \(media); frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func text(_ text: String, type: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = type
        headers[.cacheControl] = "max-age=300"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A refusal a person can read: the status and one sentence, nothing about the server.
    static func refusal(_ status: HTTPResponse.Status, _ sentence: String) -> Response {
        html(
            "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>\(status.code) · r2up</title><p>\(Html.escape(sentence))</p></html>\n",
            status: status)
    }

    static func login(failed: Bool) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Log in · r2up</title>
        <link rel="stylesheet" href="/assets/app.css"></head><body><main><h1>r2up</h1>
        \(failed ? "<p role=\"alert\">Wrong password.</p>" : "")
        <form method="post" action="/login"><label>Password <input type="password" name="password" autocomplete="current-password" autofocus></label>
        <button type="submit">Log in</button></form></main></body></html>

        """
    }
}
