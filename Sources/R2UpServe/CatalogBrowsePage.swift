import Foundation
import R2UpKit

/// Seed 001 from a published catalog (`index.json` of `r2up catalog publish`): its artists, an
/// artist's albums, an album's tracks in album order (disc, number), each playable; the player
/// goes on through the album (Now Playing, Up Next).
enum CatalogBrowsePage {
    static func render(_ index: CatalogIndex, artist: String?, album: String?, playURL: (String) -> String) -> String {
        let base = "/browse?catalog=" + BrowsePage.query(index.prefix)
        var html = "<nav aria-label=\"Catalog\" class=\"crumbs\"><a href=\"\(Html.escape(base))\">Artists</a>"
        if let artist { html += " / " + link(base + "&artist=" + BrowsePage.query(artist), artist) }
        if artist != nil, let album { html += " / " + Html.escape(album) }
        html += " · " + link("/browse?prefix=" + BrowsePage.query(index.prefix), "Folders") + "</nav>"
        guard let artist else {
            var artists: [String] = []
            for name in index.albums.map(\.artist) where !artists.contains(name) { artists.append(name) }
            artists.sort { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending }
            let items = artists.map { "<li>" + link(base + "&artist=" + BrowsePage.query($0), $0) + "</li>" }
            return html + (items.isEmpty ? "<p>Nothing here.</p>" : "<ul class=\"folders\">" + items.joined() + "</ul>")
        }
        let albums = index.albums.filter { $0.artist == artist }
        guard let album else {
            let items = albums.map { entry in
                let href = base + "&artist=" + BrowsePage.query(artist) + "&album=" + BrowsePage.query(entry.album)
                return "<li>" + link(href, entry.album + (entry.year.map { " (\($0))" } ?? "")) + "</li>"
            }
            return html + (items.isEmpty ? "<p>Nothing here.</p>" : "<ul class=\"folders\">" + items.joined() + "</ul>")
        }
        guard let chosen = albums.first(where: { $0.album == album }) else { return html + "<p>Nothing here.</p>" }
        let byKey = Dictionary(index.tracks.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        html += "<ul class=\"objects\">"
        for key in chosen.tracks {
            guard let track = byKey[key] else { continue }
            let number = track.track.map { String(format: "%02d ", $0) } ?? ""
            html += "<li class=\"track\" data-key=\"\(Html.escape(key))\"><span class=\"name\">\(Html.escape(number + track.title))</span> "
            html += "<span class=\"size\">\(Html.size(track.size))</span><span class=\"actions\">"
            html += "<button type=\"button\" class=\"play\" data-action=\"play\" data-src=\"\(Html.escape(playURL(key)))\">Play</button>"
            html += "<button type=\"button\" class=\"copy\" data-action=\"copy\" data-url=\"\(Html.escape(track.url))\">Copy URL</button></span></li>"
        }
        return html + "</ul>"
    }

    private static func link(_ href: String, _ text: String) -> String {
        "<a href=\"\(Html.escape(href))\">\(Html.escape(text))</a>"
    }
}
