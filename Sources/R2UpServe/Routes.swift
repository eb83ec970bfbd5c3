import Foundation
import Hummingbird
import NIOCore
import R2UpKit

/// The screens, the live stream, the media and the actions. The gate has already checked the
/// Host, the session and the origin of a POST; each handler checks what it was given.
struct Routes: Sendable {
    let library: Library
    let feed: LiveFeed
    let gate: ServeGate
    var session: R2UpSession { library.session }

    func add(to router: Router<ServeContext>) {
        router.get("/assets/app.css") { _, _ in Pages.text(Assets.css, type: "text/css; charset=utf-8") }
        router.get("/assets/app.js") { _, _ in Pages.text(Assets.js, type: "text/javascript; charset=utf-8") }
        router.get("/") { request, context in
            let from = FormData(Substring(request.uri.query ?? ""))?["from"].flatMap { Int($0) } ?? 0
            return try await libraryPage(context, from: from)
        }
        router.get("/queue") { _, context in
            let live = feed.states.version
            let report = try read { () throws(R2UpFailure) in try session.queueReport() }
            return page("Queue", "/queue", context, QueuePage.render(report, csrf: context.csrf), live: live)
        }
        router.get("/history") { request, context in
            let live = feed.states.version
            let items = try read { () throws(R2UpFailure) in try session.history(limit: 1000) }
            let search = FormData(Substring(request.uri.query ?? ""))?["q"] ?? ""
            return page("History", "/history", context, HistoryPage.render(items, search: search), live: live)
        }
        router.get("/events") { request, _ in
            var headers = Pages.securityHeaders
            headers[.contentType] = "text/event-stream"
            let since = FormData(Substring(request.uri.query ?? ""))?["since"].flatMap { Int($0) }
            return Response(status: .ok, headers: headers, body: feed.events(since: since))
        }
        router.get("/browse") { request, context in try await browse(request, context) }
        router.get("/api/library") { _, _ in
            let groups = try await shown().view.groups
            return try LibraryAPI.response(groups) { session.publicURL(for: $0) }
        }
        router.get("/media") { request, context in try await media(request, context) }
        router.get("/art") { request, _ in try await art(request) }
        router.post("/action") { request, context in try await action(request, context) }
    }

    /// A page; `live`: the live feed's version it shows at least (read before the page's data),
    /// from which its live stream goes on.
    func page(_ title: String, _ path: String, _ context: ServeContext, _ body: String, live: Int) -> Response {
        Pages.html(Html.page(title: title, current: path, notice: gate.takeNotice(session: context.session), body: body, live: live))
    }

    func libraryPage(_ context: ServeContext, from: Int) async throws -> Response {
        let snapshot = try await shown()
        let (view, live) = (snapshot.view, snapshot.version)
        let body = LibraryPage.render(space: view.space)
            + LibraryPage.render(groups: view.groups, from: from, csrf: context.csrf, progress: LiveState.progress(try? session.queueReport())) {
                session.publicURL(for: $0)
            }
        // A read of every track leaves tens of MiB freed: hand them back.
        ProcessMemory.releaseFreed()
        return page("Library", "/", context, body, live: live)
    }

    /// The library from a read that started after the request came (shared with the requests
    /// that came with it), for an action's checks; a store that cannot be read is a 503 with its one line.
    func fresh() async throws -> LibrarySnapshot {
        do { return try await feed.reads.value() } catch { throw HTTPError(.serviceUnavailable, message: error.message) }
    }

    /// The Library as the pages show it (``LiveFeed/shown()``).
    func shown() async throws -> LibrarySnapshot {
        do { return try await feed.shown() } catch { throw HTTPError(.serviceUnavailable, message: error.message) }
    }

    /// A store that cannot be read is a 503 with its one line, not a crash.
    func read<T>(_ body: () throws(R2UpFailure) -> T) throws -> T {
        do { return try body() } catch { throw HTTPError(.serviceUnavailable, message: error.message) }
    }

    /// A track's file, for Play: only a track the Library shows, only a regular file.
    func media(_ request: Request, _ context: ServeContext) async throws -> Response {
        guard let raw = FormData(Substring(request.uri.query ?? ""))?["path"], let path = Library.clean(raw) else {
            return Pages.refusal(.badRequest, "No such track.")
        }
        let tracks = try await shown().view.groups.flatMap(\.tracks)
        guard library.contains(path, tracks: tracks), tracks.contains(where: { $0.path == path }) else {
            return Pages.refusal(.notFound, "No such track.")
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return Pages.refusal(.notFound, "No such track.") }
        let body = try await FileIO().loadFile(path: path, context: context)
        var headers = Pages.securityHeaders
        headers[.contentType] = Self.mediaType(path)
        headers[.contentLength] = String(info.st_size)
        return Response(status: .ok, headers: headers, body: body)
    }

    /// A group's album art for its header (a thumbnail): only a group the Library shows, read
    /// from its own tracks' folder and files.
    func art(_ request: Request) async throws -> Response {
        guard let id = FormData(Substring(request.uri.query ?? ""))?["group"], id.utf8.count <= 4096 else {
            return Pages.refusal(.badRequest, "No such group.")
        }
        let groups = try await shown().view.groups
        guard let group = groups.first(where: { $0.id == id }) else { return Pages.refusal(.notFound, "No such group.") }
        let tracks = group.tracks.map(\.path).filter { library.contains($0, tracks: group.tracks) }
        guard let image = session.albumArt(of: tracks) else { return Pages.refusal(.notFound, "No art for this group.") }
        var headers = Pages.securityHeaders
        headers[.contentType] = image.contentType
        headers[.cacheControl] = "private, max-age=600"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.bytes)))
    }

    /// `scheme://host[:port]` of a URL, for a Content-Security-Policy source.
    static func origin(of url: String) -> String? {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host else { return nil }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" }) else { return nil }
        return "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
    }

    static func mediaType(_ path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "mp3": "audio/mpeg"
        case "flac": "audio/flac"
        case "m4a", "aac", "alac": "audio/mp4"
        case "ogg", "oga", "opus": "audio/ogg"
        case "wav": "audio/wav"
        default: "application/octet-stream"
        }
    }

    /// Upload All to Cloud, Retry Failed Uploads, Upload, Download, Offload, Cancel: checked,
    /// uploads and downloads started in the background (the page follows them live), then back
    /// to the page they came from.
    func action(_ request: Request, _ context: ServeContext) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: Pages.maxBody)
        guard let form = FormData(Substring(String(buffer: body))) else { return Pages.refusal(.badRequest, "The form could not be read.") }
        guard let token = form["csrf"], ServeGate.same(token, context.csrf) else {
            return Pages.refusal(.forbidden, "Refused: the form's security token is missing or old; reload the page.")
        }
        let name = form["action"] ?? ""
        let notice: String
        if name == "cancel" {
            guard let job = form["job"].flatMap(UUID.init(uuidString:)) else { return Pages.refusal(.notFound, "No such upload.") }
            let cancelled: Int
            do { cancelled = try session.cancelJobs([job]) } catch { return Pages.refusal(.notFound, error.message) }
            notice = cancelled == 0 ? "That upload is in progress in another process; it was left to it." : "Cancelled the upload."
        } else {
            guard Self.trackActions.contains(name) else { return Pages.refusal(.badRequest, "No such action.") }
            let groups = try await fresh().view.groups
            guard let chosen = choose(name, form, groups) else { return Pages.refusal(.notFound, "No such track.") }
            notice = await perform(name, chosen, tracks: groups.flatMap(\.tracks))
        }
        gate.setNotice(notice, session: context.session)
        let back = request.headers[.referer].flatMap { URL(string: $0)?.path } ?? "/"
        return Response(status: .seeOther, headers: [.location: ["/", "/queue", "/history"].contains(back) ? back : "/"])
    }

    static let trackActions: Set<String> = ["upload-all", "retry-failed", "offload-all", "upload", "download", "offload"]

    /// The tracks a form names: a group's that the action applies to, or one track; nil when
    /// the group or the track is not one the Library shows.
    func choose(_ name: String, _ form: FormData, _ groups: [TrackGroup<TrackStatus>]) -> [TrackStatus]? {
        let tracks = groups.flatMap(\.tracks)
        switch name {
        case "upload-all", "retry-failed", "offload-all":
            guard let group = groups.first(where: { $0.id == form["group"] }) else { return nil }
            let wanted: Set<TrackIcon> =
                switch name {
                case "retry-failed": [.uploadError]
                case "offload-all": Actions.offloadable
                default: [.localOnly, .uploadError]
                }
            return group.tracks.filter { wanted.contains($0.icon) }
        default:
            guard let raw = form["path"], let path = Library.clean(raw), library.contains(path, tracks: tracks),
                let track = tracks.first(where: { $0.path == path })
            else { return nil }
            return [track]
        }
    }

    /// Starts the action on `chosen` (an offload runs here: its checks are HEADs, and its
    /// notice says what was freed and what was kept); the notice to show.
    func perform(_ name: String, _ chosen: [TrackStatus], tracks: [TrackStatus]) async -> String {
        let count = "\(chosen.count) track\(chosen.count == 1 ? "" : "s")"
        switch name {
        case "download":
            let paths = chosen.map(\.path)
            feed.start { _ = try? await session.fetch(paths) }
            return "Downloading \(count)."
        case "offload", "offload-all":
            guard !chosen.isEmpty else { return "Nothing to offload." }
            do throws(R2UpFailure) {
                return OffloadNotice.text(try await session.offload(chosen.map(\.path)))
            } catch { return error.message }
        default:
            // A push refuses a named file it cannot read (as `push FILE` does) and records nothing:
            // the notice says so, since the row cannot.
            var unreadable: [String] = []
            let readable = chosen.filter { track in
                guard access(track.path, R_OK) != 0 else { return true }
                unreadable.append("\((track.path as NSString).lastPathComponent) cannot be read (\(String(cString: strerror(errno))))")
                return false
            }
            // One push per folder, each with the prefix its tracks already have (as `push ROOT` keys them).
            let byFolder = Dictionary(grouping: readable.map(\.path)) { ($0 as NSString).deletingLastPathComponent }
            let jobs = byFolder.sorted { $0.key < $1.key }.map { ($0.value.sorted(), library.prefix(for: $0.key, tracks: tracks)) }
            feed.start {
                for (paths, prefix) in jobs where !Task.isCancelled {
                    await session.push(paths, prefix: prefix.isEmpty ? nil : prefix)
                }
            }
            let refused = unreadable.isEmpty ? "" : " Not uploaded: " + unreadable.joined(separator: "; ") + "."
            if readable.isEmpty { return chosen.isEmpty ? "Nothing to upload." : String(refused.dropFirst()) }
            return "Uploading \(readable.count) track\(readable.count == 1 ? "" : "s")." + refused
        }
    }
}
