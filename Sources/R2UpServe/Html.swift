import Foundation
import R2UpKit

/// Server-rendered HTML: every value escaped, one layout for every screen.
enum Html {
    /// Text safe inside an element or a quoted attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // A control character in a file name must not reach the page as itself.
                if scalar.value < 0x20 && scalar != "\t" { out += "\u{FFFD}" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// The page around `body`: the navigation, the notice an action left, the assets (all from this binary).
    /// `live`: the live feed's version the page shows at least (its stream starts there).
    static func page(title: String, current: String, notice: String?, body: String, live: Int) -> String {
        let links = [("/", "Library"), ("/queue", "Queue"), ("/history", "History"), ("/browse", "Browse")].map { href, name in
            "<a href=\"\(href)\"\(href == current ? " aria-current=\"page\"" : "")>\(name)</a>"
        }.joined(separator: " ")
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · r2up</title>
            <link rel="stylesheet" href="/assets/app.css">
            <script src="/assets/app.js" defer></script>
            </head><body>
            <nav aria-label="Screens">\(links)</nav>
            <main>
            <h1>\(escape(title))</h1>
            <p id="live" class="live" role="status" aria-live="polite" data-since="\(live)"></p>

            """
        if let notice { html += "<p class=\"notice\" role=\"alert\">\(escape(notice))</p>\n" }
        html += body
        html += "\n</main></body></html>\n"
        return html
    }

    /// A POST form of one button: the action, its target, and the session's CSRF token.
    static func actionForm(_ action: String, fields: [(String, String)], csrf: String, label: String, hidden: Bool = false) -> String {
        var html = "<form method=\"post\" action=\"/action\" class=\"action\" data-action=\"\(escape(action))\"\(hidden ? " hidden" : "")>"
        html += "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(csrf))\">"
        html += "<input type=\"hidden\" name=\"action\" value=\"\(escape(action))\">"
        for (name, value) in fields { html += "<input type=\"hidden\" name=\"\(name)\" value=\"\(escape(value))\">" }
        html += "<button type=\"submit\">\(escape(label))</button></form>"
        return html
    }

    /// "2.4 MB": the sizes `history`, `status` and `offload` print (seed 002's table).
    static func size(_ bytes: Int64) -> String { ByteCount.string(bytes) }

    /// A date as ISO 8601 UTC (what `history --json` gives), for a `<time>` element.
    static func date(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

extension TrackIcon {
    /// What a screen reader says for the icon.
    var spoken: String {
        switch self {
        case .uploading: "Uploading"
        case .uploadError: "Upload failed"
        case .downloading: "Downloading"
        case .downloadError: "Download failed"
        case .downloaded: "Downloaded"
        case .uploaded: "Uploaded"
        case .cloudOnly: "In the cloud only"
        case .localOnly: "Not uploaded"
        }
    }
}

extension GroupSummary {
    /// What a screen reader says for a group's state.
    var spoken: String {
        switch kind {
        case .uploading: "Uploading, \(uploaded) of \(total) uploaded"
        case .error: "Upload errors, \(uploaded) of \(total) uploaded"
        case .allUploaded: "All \(total) uploaded"
        case .partial: "\(uploaded) of \(total) uploaded"
        case nil: "Not uploaded"
        }
    }
}
