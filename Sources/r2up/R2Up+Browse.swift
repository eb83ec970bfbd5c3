import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Ls: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List the folders and objects under a prefix of the bucket.",
            discussion: """
                One level at a time, like a folder: 'r2up ls' shows the top, 'r2up ls Albums/Live' \
                what is in Albums/Live/. Folders first (DIR), then objects with their date (local \
                time) and size; a summary line goes to stderr. Listings over 1,000 entries are \
                read page by page to the end. With -r, every object under the prefix at any depth \
                (path below the prefix) and a total.
                """)

        @OptionGroup var global: GlobalOptions

        @Flag(name: [.short, .long], help: "Every object under the prefix at any depth, with its size, and the total.")
        var recursive = false

        @Flag(help: "Print the listing as JSON (bucket, prefix, folders, objects with key, size, lastModified, etag).")
        var json = false

        @Argument(help: "A key prefix (folder); the bucket's top when left out.")
        var prefix: String = ""

        func run() async throws {
            let service: UploadService
            let listing: BucketListing
            do {
                service = try UploadService(settings: try global.settings(), options: RunOptions())
            } catch {
                throw CommandFailure(error)
            }
            do {
                listing = try await service.browse(prefix: prefix, recursive: recursive)
            } catch {
                throw CommandFailure(await service.diagnose(error, subject: nil))
            }
            if json {
                Terminal.output(JSONOutput.encode(listing))
                return
            }
            for line in ListingTable.lines(listing) { Terminal.output(line) }
            if !global.quiet { Terminal.error(ListingTable.summary(listing, recursive: recursive)) }
        }
    }

    struct Presign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a presigned GET URL for a key: anyone with it can download the object until it expires.",
            discussion: """
                Signed offline with your credentials (no request is sent); the object need not exist \
                yet. --expires takes seconds or 90s, 15m, 12h, 7d: from 1 second to 7 days, SigV4's limit.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "How long the URL works: 3600, 90m, 12h, 7d (1s to 7d; default 1h).")
        var expires = "1h"

        @Argument(help: "The object's key.")
        var key: String

        func validate() throws {
            if case .failure(let problem) = PresignExpiry.seconds(expires) { throw ValidationError(problem.description) }
        }

        func run() async throws {
            guard case .success(let seconds) = PresignExpiry.seconds(expires) else { return }  // validate() said why
            do {
                let service = try UploadService(settings: try global.settings(), options: RunOptions())
                let key = try KeyRule.checked(key)
                Terminal.output(try service.presignedURL(key: key, expires: seconds))
            } catch {
                throw CommandFailure(error)
            }
        }
    }
}
