import Foundation
import R2UpKit

/// Seed 001: the bucket as folders (artist → album) down to tracks, each track playable (from its
/// public URL, or a presigned one); the player goes on through the album (Now Playing, Up Next).
enum BrowsePage {
    static let audio: Set<String> = ["mp3", "flac", "m4a", "aac", "alac", "ogg", "oga", "opus", "wav"]

    static func render(_ listing: BucketListing, publicURL: (String) -> String, playURL: (String) -> String) -> String {
        var html = "<nav aria-label=\"Folders\" class=\"crumbs\"><a href=\"/browse\">\(Html.escape(listing.bucket))</a>"
        var walked = ""
        for part in listing.prefix.split(separator: "/") {
            walked += part + "/"
            html += " / <a href=\"/browse?prefix=\(query(walked))\">\(Html.escape(String(part)))</a>"
        }
        html += "</nav>"
        if !listing.folders.isEmpty {
            html += "<ul class=\"folders\">"
            for folder in listing.folders {
                let name = String(folder.dropFirst(listing.prefix.count).dropLast(folder.hasSuffix("/") ? 1 : 0))
                html += "<li><a href=\"/browse?prefix=\(query(folder))\">\(Html.escape(name))/</a></li>"
            }
            html += "</ul>"
        }
        let objects = listing.objects.filter { !$0.key.hasSuffix("/") }
        if !objects.isEmpty {
            html += "<ul class=\"objects\">"
            for object in objects {
                let name = String(object.key.dropFirst(listing.prefix.count))
                let url = Html.escape(publicURL(object.key))
                html += "<li class=\"track\" data-key=\"\(Html.escape(object.key))\"><span class=\"name\">\(Html.escape(name))</span> "
                html += "<span class=\"size\">\(Html.size(object.size))</span><span class=\"actions\">"
                if audio.contains((name as NSString).pathExtension.lowercased()) {
                    html += "<button type=\"button\" class=\"play\" data-action=\"play\" data-src=\"\(Html.escape(playURL(object.key)))\">Play</button>"
                }
                html += "<button type=\"button\" class=\"copy\" data-action=\"copy\" data-url=\"\(url)\">Copy URL</button></span></li>"
            }
            html += "</ul>"
        }
        if listing.folders.isEmpty && objects.isEmpty { html += "<p>Nothing here.</p>" }
        return html
    }

    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}
