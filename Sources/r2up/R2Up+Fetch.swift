import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring offloaded (cloud only) tracks back to their own paths.",
            discussion: """
                Each track named (a folder names its tracks) whose file is gone is downloaded from the key \
                r2up recorded, into a hidden temporary file beside it, and renamed into place only once \
                its size, its ETag as recorded at upload (and MD5, when the ETag is one) and its content \
                digest check out; it gets back its mtime of upload, and shows ↓ downloaded. An interrupted \
                fetch resumes from the parts verified on disk. A file on disk is never replaced. Each \
                fetched path is printed; a summary goes to stderr. `r2up pull KEY DEST` is the same \
                machinery for objects by key.
                """)

        @OptionGroup var global: GlobalOptions

        @OptionGroup var transfer: DownloadOptions

        @Flag(help: "Print a JSON array of the tracks instead of paths.")
        var json = false

        @Argument(help: "Offloaded tracks, or folders of tracks, to bring back.")
        var paths: [String]

        func validate() throws {
            if paths.isEmpty { throw ValidationError("name the tracks or folders to fetch") }
        }

        func run() async throws {
            let fetcher: Fetcher
            do {
                let settings = try global.settings()
                let service = try UploadService(settings: settings, options: transfer.runOptions)
                fetcher = Fetcher(puller: Puller(service: service, database: try LocalStore(path: settings.database.value)))
            } catch {
                throw CommandFailure(error)
            }
            let selection: (tracks: [StoredTrack], alreadyLocal: Int)
            do { selection = try fetcher.select(paths) } catch { throw CommandFailure(error.diagnosis) }

            let quiet = global.quiet || json
            let progress = TransferProgress()
            let display = ProgressDisplay.make(for: progress, quiet: quiet)
            display?.start()
            var summary = await fetcher.run(selection.tracks, progress: display == nil ? nil : progress) { outcome in
                if let error = outcome.error {
                    guard !Fetcher.stopsRun(error) else { return }  // the stop's one line says it
                    let line = "r2up: \(TextColumns.printable(outcome.path)): \(TextColumns.printable(DownloadFailure.fetchMessage(error, key: outcome.key)))"
                    if let display { display.print(line, toStandardError: true) } else { Terminal.error(line) }
                } else if !quiet {
                    let path = TextColumns.printable(outcome.path)
                    if let display { display.print(path) } else { Terminal.output(path) }
                }
            }
            display?.finish()
            summary.alreadyLocal += selection.alreadyLocal
            if json {
                let rows = (summary.fetched + summary.failed).sorted { $0.path < $1.path }.map(FetchedTrack.init)
                Terminal.output(JSONOutput.encode(rows))
            } else {
                if let stop = summary.stoppedBy {
                    let left = summary.notTried > 0 ? "; \(summary.notTried) not tried, still cloud only" : ""
                    Terminal.error("r2up: \(TextColumns.printable(stop.message))\(left)")
                }
                if !global.quiet { Terminal.error(Self.line(summary)) }
            }
            if summary.category != .success { throw CommandFailure(category: summary.category) }
        }

        /// "Fetched 2 files (16 MB), 8 MB of it resumed from disk; 1 already on disk; 1 failed."
        static func line(_ summary: FetchSummary) -> String {
            let count = summary.fetched.count
            var line = "Fetched \(count) \(count == 1 ? "file" : "files") (\(ByteCount.string(summary.fetchedBytes)))"
            if summary.resumedBytes > 0 { line += ", \(ByteCount.string(summary.resumedBytes)) of it resumed from disk" }
            if summary.alreadyLocal > 0 { line += "; \(summary.alreadyLocal) already on disk" }
            if !summary.failed.isEmpty { line += "; \(summary.failed.count) failed" }
            return line + "."
        }
    }
}

/// One entry of `fetch --json`.
struct FetchedTrack: Encodable {
    var path: String
    var key: String
    var size: Int64
    var resumedBytes: Int64
    /// fetched or failed.
    var result: String
    var error: String?

    init(_ outcome: FetchOutcome) {
        path = outcome.path
        key = outcome.key
        size = outcome.size
        resumedBytes = outcome.resumedBytes
        result = outcome.error == nil ? "fetched" : "failed"
        error = outcome.error.map { DownloadFailure.fetchMessage($0, key: outcome.key) }
    }
}

extension FetchSelectionError {
    var diagnosis: Diagnosis {
        switch self {
        case .store(let error): return Diagnosis(error)
        case .input(.unknownPath(let path)):
            return Diagnosis(category: .badInput, message: "\(path): r2up knows no track with a cloud copy there; nothing fetched")
        }
    }
}
