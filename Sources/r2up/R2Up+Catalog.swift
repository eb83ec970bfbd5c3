import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Catalog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a browsable, playable catalog of the bucket's tracks.",
            subcommands: [Publish.self])

        struct Publish: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Upload index.json and index.html, built from the bucket itself.",
                discussion: """
                    Lists the bucket (under --prefix) and HEADs each audio object for its x-amz-meta tags; \
                    what a HEAD told is kept in the database by ETag, so publishing again costs one listing \
                    and HEADs only of new or changed objects. Nothing is sent when nothing changed. \
                    index.json is replaced only if it is still what was listed (If-Match), so publishers on \
                    several machines never drop each other's tracks. Prints the page's public URL.
                    """)

            @OptionGroup var global: GlobalOptions

            @Option(help: "Publish the tracks under this key prefix; the catalog goes there too.")
            var prefix: String?

            @Flag(help: "Print what was done as a JSON object.")
            var json = false

            func run() async throws {
                let (_, service, store) = try global.open()
                let result = try await CatalogCommand.publish(service: service, store: store, prefix: prefix)
                if json {
                    Terminal.output(JSONOutput.encode(PublishedCatalog(result)))
                } else if !global.quiet {
                    Terminal.output(CatalogCommand.line(result))
                    Terminal.output(result.indexURL)
                }
            }
        }
    }
}

/// What `catalog publish` and `sync --publish` share.
enum CatalogCommand {
    static func publish(service: UploadService, store: LocalStore, prefix: String?) async throws -> CatalogPublishResult {
        let normalized = SyncPlan.normalizedPrefix(prefix)
        do {
            return try await CatalogPublisher(service: service, database: store).publish(prefix: normalized)
        } catch {
            switch error {
            case .s3(let inner): throw CommandFailure(await service.diagnose(inner, subject: "catalog publish"))
            case .store(let inner): throw CommandFailure(Diagnosis(inner))
            case .contended: throw CommandFailure(Diagnosis(category: .uploadFailed, message: error.description))
            }
        }
    }

    static func line(_ result: CatalogPublishResult) -> String {
        let art = result.artSent == 0 ? nil : "\(result.artSent) album art \(result.artSent == 1 ? "image" : "images")"
        let sent = [result.jsonSent ? "index.json" : nil, result.htmlSent ? "index.html" : nil, art].compactMap { $0 }
        return "catalog: \(result.tracks) tracks, \(result.heads) objects read, "
            + (sent.isEmpty ? "nothing changed" : "sent " + sent.joined(separator: " and "))
    }
}

/// `catalog publish --json`.
struct PublishedCatalog: Codable {
    var tracks: Int
    var heads: Int
    var jsonSent: Bool
    var htmlSent: Bool
    var retries: Int
    /// Album art images and thumbnails uploaded; albums whose art the index references.
    var artSent: Int
    var albumsWithArt: Int
    var url: String
    var jsonURL: String

    init(_ result: CatalogPublishResult) {
        tracks = result.tracks
        heads = result.heads
        jsonSent = result.jsonSent
        htmlSent = result.htmlSent
        retries = result.retries
        artSent = result.artSent
        albumsWithArt = result.albumsWithArt
        url = result.indexURL
        jsonURL = result.jsonURL
    }
}
