import ArgumentParser
import Foundation
import Uploader

extension R2Up {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List past uploads, newest first.",
            discussion: """
                Columns: date (local time), size, key, public URL. Needs only the database \
                (--db, R2UP_DB), no endpoint or credentials.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "How many uploads to list.")
        var limit = 20

        @Flag(help: "Print a JSON array of the uploads (id, fileName, fileSize, r2Key, uploadDate, publicURL, bucket, etag).")
        var json = false

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit must be 1 or more, got \(limit)") }
        }

        func run() async throws {
            let items: [UploadItem]
            do {
                items = try ReadOnlyStore.open(global)?.recentUploads(limit: limit) ?? []
            } catch {
                throw CommandFailure(error)
            }
            if json {
                Terminal.output(items.isEmpty ? "[]" : String(decoding: try UploadItem.json(items), as: UTF8.self))
                return
            }
            guard !items.isEmpty else {
                if !global.quiet { Terminal.error("No uploads yet.") }
                return
            }
            for line in HistoryTable.lines(items) { Terminal.output(line) }
        }
    }
}

/// The store as the read-only commands (history, copy-url, status) open it.
enum ReadOnlyStore {
    /// The database the settings name, or nil when its file does not exist yet: reading
    /// never creates the database (nor its folder); an absent one is an empty store.
    /// Needs no endpoint, credentials or bucket.
    static func open(_ global: GlobalOptions) throws -> Store? {
        let path = try global.settings().database.value
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try Store.openForReading(path)
    }
}
