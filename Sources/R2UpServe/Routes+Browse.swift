import Foundation
import Hummingbird
import R2UpKit

extension Routes {
    /// Browse (seed 001): the bucket folder by folder (`?prefix=`), or a published catalog by
    /// artist and album (`?catalog=PREFIX&artist=…&album=…`); `/browse` alone is the catalog at
    /// the top of the bucket when one is published there, else its folders.
    func browse(_ request: Request, _ context: ServeContext) async throws -> Response {
        let form = FormData(Substring(request.uri.query ?? ""))
        let given = [form?["prefix"], form?["catalog"], form?["artist"], form?["album"]].compactMap { $0 }
        guard given.allSatisfy({ $0.utf8.count <= 1024 && !$0.unicodeScalars.contains(where: { $0.value < 0x20 }) }) else {
            return Pages.refusal(.badRequest, "That is not a folder of the bucket.")
        }
        if let catalog = form?["catalog"] {
            guard let index = await session.catalogIndex(prefix: catalog) else {
                return Pages.refusal(.notFound, "No catalog is published there.")
            }
            return browsePage(CatalogBrowsePage.render(index, artist: form?["artist"], album: form?["album"]) { session.playURL(for: $0) }, context)
        }
        let prefix = form?["prefix"] ?? ""
        let listing: BucketListing
        do throws(R2UpFailure) { listing = try await session.browse(prefix: prefix) } catch {
            throw HTTPError(.badGateway, message: error.message)
        }
        let published = listing.objects.contains { $0.key == prefix + CatalogIndex.fileName }
        if published && form?["prefix"] == nil, let index = await session.catalogIndex(prefix: prefix) {
            return browsePage(CatalogBrowsePage.render(index, artist: nil, album: nil) { session.playURL(for: $0) }, context)
        }
        var body = BrowsePage.render(listing, publicURL: { session.publicURL(for: $0) }, playURL: { session.playURL(for: $0) })
        if published {
            body = "<p><a href=\"\(Html.escape("/browse?catalog=" + BrowsePage.query(prefix)))\">By artist and album (the published catalog)</a></p>" + body
        }
        return browsePage(body, context)
    }

    /// A Browse page: its player streams from the bucket (a public URL or a presigned one), so
    /// that origin may serve media here.
    private func browsePage(_ body: String, _ context: ServeContext) -> Response {
        var response = page("Browse", "/browse", context, body, live: feed.states.version)
        if let origin = Self.origin(of: session.playURL(for: "a")) {
            response.headers[.contentSecurityPolicy] = Pages.policy(media: "'self' " + origin)
        }
        return response
    }
}
