import Foundation
import R2UpKit

/// Seed 003's HUD: counts, now uploading with progress, up next, failed with reason and next attempt.
enum QueuePage {
    static func render(_ report: QueueReport, csrf: String) -> String {
        let counts = report.counts
        var html = "<dl class=\"hud\" id=\"hud\">"
        for (name, value) in [("queued", counts.queued), ("uploading", counts.uploading), ("interrupted", counts.interrupted), ("failed", counts.failed)] {
            html += "<div><dt>\(name)</dt><dd data-count=\"\(name)\">\(value)</dd></div>"
        }
        html += "</dl>"
        html += section("Uploading", report.uploading, csrf: csrf) { entry in
            let percent = entry.size > 0 ? Int(Double(entry.bytesSent) / Double(entry.size) * 100) : 100
            var text = "<progress max=\"100\" value=\"\(percent)\">\(percent)%</progress> \(Html.size(entry.bytesSent)) of \(Html.size(entry.size))"
            if let rate = entry.bytesPerSecond { text += " · \(Html.size(Int64(rate)))/s" }
            return text
        }
        html += section("Interrupted (resume on the next run)", report.interrupted, csrf: csrf) { _ in "" }
        html += section("Up next", report.upNext, csrf: csrf) { Html.size($0.size) }
        html += section("Failed", report.failed, csrf: csrf) { entry in
            var text = Html.escape(entry.lastError ?? "")
            if let next = entry.nextAttemptAt { text += " · next attempt <time>\(Html.date(next))</time>" }
            return text
        }
        if let last = report.lastCompleted {
            html += "<p>Last completed: \(Html.escape(last.fileName)) · <a href=\"\(Html.escape(last.publicURL.absoluteString))\">\(Html.escape(last.publicURL.absoluteString))</a></p>"
        }
        return html
    }

    private static func section(
        _ title: String, _ entries: [QueueReport.Entry], csrf: String, detail: (QueueReport.Entry) -> String
    ) -> String {
        guard !entries.isEmpty else { return "" }
        var html = "<section class=\"jobs\"><h2>\(Html.escape(title)) (\(entries.count))</h2><ul>"
        for entry in entries {
            html += "<li data-path=\"\(Html.escape(entry.path))\" data-state=\"\(Html.escape(entry.state))\">"
            html += "<span class=\"name\">\(Html.escape((entry.path as NSString).lastPathComponent))</span> → "
            html += "<code>\(Html.escape(entry.key))</code> \(detail(entry))"
            if entry.state == "failed" {
                html += Html.actionForm("upload", fields: [("path", entry.path)], csrf: csrf, label: "Retry")
            }
            if title != "Uploading" {
                html += Html.actionForm("cancel", fields: [("job", entry.id.uuidString)], csrf: csrf, label: "Cancel")
            }
            html += "</li>"
        }
        return html + "</ul></section>"
    }
}

/// Seed 002's list: file name, size, date, public URL; a search over names and keys.
enum HistoryPage {
    static func render(_ items: [UploadItem], search: String) -> String {
        var html = "<form method=\"get\" action=\"/history\" role=\"search\"><label>Search "
        html += "<input type=\"search\" name=\"q\" value=\"\(Html.escape(search))\"></label> <button type=\"submit\">Search</button></form>"
        let needle = search.lowercased()
        let shown = needle.isEmpty ? items : items.filter { $0.fileName.lowercased().contains(needle) || $0.r2Key.lowercased().contains(needle) }
        guard !shown.isEmpty else { return html + "<p>No uploads\(needle.isEmpty ? " yet" : " match")</p>" }
        html += "<table class=\"history\"><thead><tr><th>File</th><th>Size</th><th>Date</th><th>URL</th></tr></thead><tbody>"
        for item in shown {
            let url = Html.escape(item.publicURL.absoluteString)
            html += "<tr data-key=\"\(Html.escape(item.r2Key))\"><td>\(Html.escape(item.fileName))</td><td>\(Html.size(item.fileSize))</td>"
            html += "<td><time>\(Html.date(item.uploadDate))</time></td>"
            html += "<td><a href=\"\(url)\">\(url)</a> <button type=\"button\" class=\"copy\" data-url=\"\(url)\">Copy URL</button></td></tr>"
        }
        return html + "</tbody></table>"
    }
}
