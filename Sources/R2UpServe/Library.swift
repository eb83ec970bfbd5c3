import Foundation
import R2UpKit

/// The Library as the server sees it: the folders it serves and their groups, read through the
/// session only.
struct Library: Sendable {
    let session: R2UpSession
    /// Absolute folders; empty: every track r2up knows.
    let roots: [String]

    /// The groups of every root, as `status ROOT` groups them, and their space, as `r2up du`
    /// totals it (seed 004's storage view): one walk of each root.
    func view() throws(R2UpFailure) -> LibraryView { try session.libraryView(under: roots) }

    /// Whether `path` (absolute, standardized) is inside a served folder; without folders,
    /// whether r2up knows the track.
    func contains(_ path: String, tracks: [TrackStatus]) -> Bool {
        guard !roots.isEmpty else { return tracks.contains { $0.path == path } }
        return roots.contains { root in path.hasPrefix(root == "/" ? "/" : root + "/") }
    }

    /// A path from the browser, made absolute and standardized; nil when it is not one
    /// (relative, `..` parts, a NUL) so it is refused before anything looks at the disk.
    static func clean(_ raw: String) -> String? {
        guard raw.hasPrefix("/"), !raw.contains("\0"), raw.utf8.count <= 4096 else { return nil }
        let parts = raw.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return "/" + parts.joined(separator: "/")
    }

    /// The key prefix for new uploads from `folder`: the one its uploaded tracks agree on
    /// (their key less their file name), else the folder's path inside its served root (as
    /// `r2up push ROOT` keys it), else the folder's name.
    func prefix(for folder: String, tracks: [TrackStatus]) -> String {
        var agreed: Set<String> = []
        for track in tracks where (track.path as NSString).deletingLastPathComponent == folder {
            let name = (track.path as NSString).lastPathComponent
            if let key = track.key, key.hasSuffix(name) { agreed.insert(String(key.dropLast(name.utf8.count))) }
        }
        if agreed.count == 1, let only = agreed.first { return only }
        if let root = roots.first(where: { folder == $0 || folder.hasPrefix($0 + "/") }) {
            let inside = folder == root ? "" : String(folder.dropFirst(root.count + 1))
            return inside.isEmpty ? "" : inside + "/"
        }
        return (folder as NSString).lastPathComponent + "/"
    }
}

/// Seed 000 and 004's screen: groups with their summaries and actions, tracks with their icons.
enum LibraryPage {
    /// Tracks on one page at most (whole groups): a big library comes a page at a time, and
    /// Chromium draws 400 rows within a second (1,000 took 1.6-2 s to its load event).
    static let pageTracks = 400

    /// The groups from the `from`th on, up to ``pageTracks`` tracks, and a link to the next ones.
    /// `progress`: the percent sent of each upload under way, by path (a bar on its row).
    static func render(
        groups: [TrackGroup<TrackStatus>], from: Int, csrf: String, progress: [String: Int] = [:], publicURL: (String) -> String
    ) -> String {
        guard !groups.isEmpty else { return "<p>No tracks yet.</p>" }
        var html = ""
        var index = min(max(0, from), groups.count)
        var tracks = 0
        if index > 0 { html += "<p><a href=\"/\">First groups</a></p>" }
        while index < groups.count && (tracks == 0 || tracks + groups[index].tracks.count <= pageTracks) {
            html += render(groups[index], csrf: csrf, progress: progress, publicURL: publicURL)
            tracks += groups[index].tracks.count
            index += 1
        }
        if index < groups.count {
            html += "<p><a href=\"/?from=\(index)\" rel=\"next\">Next groups (\(groups.count - index) more)</a></p>"
        }
        return html
    }

    /// Seed 004's storage view above the groups: the numbers `r2up du` totals, each also as a
    /// `data-` attribute in bytes for scripts and tests.
    static func render(space: SpaceCounts) -> String {
        let parts: [(attribute: String, label: String, bytes: Int64)] = [
            ("on-disk", "on disk", space.onDisk), ("in-bucket", "in the bucket", space.inBucket),
            ("local-only", "only here (not yet safe)", space.localOnly),
            ("cloud-only", "only in the cloud (offloaded)", space.cloudOnly), ("both", "in both", space.both),
        ]
        var html = "<section class=\"space\" aria-label=\"Space\" data-tracks=\"\(space.tracks)\""
        for part in parts { html += " data-\(part.attribute)=\"\(part.bytes)\"" }
        html += "><p>\(space.tracks) \(space.tracks == 1 ? "track" : "tracks"): "
        html += parts.map { "\(Html.escape(ByteCount.string($0.bytes))) \($0.label)" }.joined(separator: " · ")
        html += "</p></section>\n"
        return html
    }

    static func render(_ group: TrackGroup<TrackStatus>, csrf: String, progress: [String: Int] = [:], publicURL: (String) -> String) -> String {
        let summary = group.summary
        let label = summary.label(ascii: false)
        var html = "<section class=\"group\" data-group=\"\(Html.escape(group.id))\" data-summary=\"\(Html.escape(label))\">"
        let art = "/art?group=" + (group.id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        // Lazy: a page of groups asks only for the art in view; a group without art hides its image (app.js).
        html += "<header><img class=\"art\" src=\"\(Html.escape(art))\" alt=\"\" width=\"48\" height=\"48\" loading=\"lazy\">"
        html += "<h2>\(Html.escape(group.title))</h2>"
        if group.heading != nil { html += "<p class=\"folder\">\(Html.escape(group.folder))</p>" }
        html += "<span class=\"count\">\(group.tracks.count) \(group.tracks.count == 1 ? "track" : "tracks")</span> "
        html += "<span class=\"summary s-\(summary.name ?? "none")\" data-role=\"summary\">"
        html += "<span aria-hidden=\"true\">\(Html.escape(label))</span>"
        html += "<span class=\"sr\">\(Html.escape(summary.spoken))</span></span>"
        let shown = Actions.shown(group)
        for action in [Actions.uploadAll, Actions.retryFailed, Actions.offloadAll] {
            html += Html.actionForm(action.name, fields: [("group", group.id)], csrf: csrf, label: action.label, hidden: !shown.contains(action.name))
        }
        html += "</header><ul>"
        for track in group.tracks { html += row(track, csrf: csrf, progress: progress[track.path], publicURL: publicURL) }
        html += "</ul></section>\n"
        return html
    }

    static func row(_ track: TrackStatus, csrf: String, progress: Int? = nil, publicURL: (String) -> String) -> String {
        let icon = track.icon
        var html = "<li class=\"track\" data-path=\"\(Html.escape(track.path))\" data-icon=\"\(icon.name)\">"
        html += "<span class=\"icon i-\(icon.name)\" aria-hidden=\"true\">\(icon.glyph ?? "")</span>"
        html += "<span class=\"sr\" data-role=\"state\">\(icon.spoken)</span> "
        html += "<span class=\"name\">\(Html.escape((track.path as NSString).lastPathComponent))</span>"
        // The upload's progress while it runs (the live stream moves it; hidden otherwise).
        let sent = icon == .uploading ? progress : nil
        html += " <progress class=\"sent\" max=\"100\" value=\"\(sent ?? 0)\" aria-label=\"Sent\"\(sent == nil ? " hidden" : "")></progress>"
        html += " <span class=\"error\" data-role=\"error\">"
        if icon == .uploadError || icon == .downloadError, let error = track.lastError { html += Html.escape(error) }
        html += "</span><span class=\"actions\">"
        // Every action is in the row; the ones that do not apply are hidden, and the live
        // stream shows them when the track's state changes.
        let shown = Actions.shown(track)
        let fields = [("path", track.path)]
        html += Html.actionForm(Actions.upload.name, fields: fields, csrf: csrf, label: Actions.upload.label, hidden: !shown.contains("upload"))
        let url = track.key.map(publicURL) ?? ""
        html += "<button type=\"button\" class=\"copy\" data-action=\"copy\" data-url=\"\(Html.escape(url))\"\(shown.contains("copy") ? "" : " hidden")>Copy URL</button>"
        html += Html.actionForm(Actions.download.name, fields: fields, csrf: csrf, label: Actions.download.label, hidden: !shown.contains("download"))
        html += Html.actionForm(Actions.offload.name, fields: fields, csrf: csrf, label: Actions.offload.label, hidden: !shown.contains("offload"))
        let media = "/media?path=" + (track.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        html += "<button type=\"button\" class=\"play\" data-action=\"play\" data-src=\"\(Html.escape(media))\"\(shown.contains("play") ? "" : " hidden")>Play</button>"
        html += "</span></li>"
        return html
    }
}

/// The actions of the Library and when each applies (seed 000): the page and its live stream
/// both ask here.
enum Actions {
    struct Action {
        var name: String
        var label: String
    }

    static let uploadAll = Action(name: "upload-all", label: "Upload All to Cloud")
    static let retryFailed = Action(name: "retry-failed", label: "Retry Failed Uploads")
    static let upload = Action(name: "upload", label: "Upload")
    static let download = Action(name: "download", label: "Download")
    static let offload = Action(name: "offload", label: "Offload")
    static let offloadAll = Action(name: "offload-all", label: "Offload")
    /// A file on disk with a cloud copy: what Offload may remove, once the copy is verified.
    static let offloadable: Set<TrackIcon> = [.uploaded, .downloaded]

    /// A group's actions that apply: Upload All while a track is not uploaded, Retry Failed while
    /// one failed, Offload while one is on disk and in the cloud.
    static func shown(_ group: TrackGroup<TrackStatus>) -> [String] {
        var names: [String] = []
        if group.tracks.contains(where: { $0.icon == .localOnly || $0.icon == .uploadError }) { names.append(uploadAll.name) }
        if group.summary.errors > 0 { names.append(retryFailed.name) }
        if group.tracks.contains(where: { offloadable.contains($0.icon) }) { names.append(offloadAll.name) }
        return names
    }

    /// A track's: Upload (not uploaded, or failed), Copy URL (a cloud copy), Download (cloud
    /// only, or a failed download), Offload (on disk and in the cloud), Play (a file on disk).
    static func shown(_ track: TrackStatus) -> [String] { shown(icon: track.icon, inCloud: track.key != nil) }

    /// A track's actions by its icon and whether it has a cloud copy (a key).
    static func shown(icon: TrackIcon, inCloud: Bool) -> [String] {
        var names: [String] = []
        if icon == .localOnly || icon == .uploadError { names.append("upload") }
        if inCloud && icon != .localOnly && icon != .uploadError { names.append("copy") }
        if icon == .cloudOnly || icon == .downloadError { names.append("download") }
        if offloadable.contains(icon) { names.append("offload") }
        if icon != .cloudOnly { names.append("play") }
        return names
    }
}
