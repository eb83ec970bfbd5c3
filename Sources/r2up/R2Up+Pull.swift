import ArgumentParser
import Foundation
import R2UpKit
import R2UpModel
import R2UpStore
import R2UpTransfer

extension R2Up {
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download an object, or every object under a prefix, into a folder.",
            discussion: """
                KEY downloads one object into DEST under its own name; a PREFIX (ending in /, or a name \
                that is no object) downloads everything under it, keeping the folders below the prefix. \
                Large objects come as parallel 8 MiB ranged GETs into a hidden temporary file that is \
                renamed into place once its size (and MD5, when the ETag is one) checks out; an \
                interrupted pull resumes from the parts verified on disk. A file already identical is \
                skipped. A local file that changed since r2up last uploaded or downloaded it is not \
                replaced: it is named and counted as failed (exit 1) unless --overwrite. Keys with '..', a leading '/' or a backslash are refused. Each downloaded path \
                is printed; a summary goes to stderr.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "Requests in flight at once, parts included (1-64).")
        var concurrency = 4

        @Option(parsing: .unconditional, help: "Total download rate limit, e.g. 500K, 10M (bytes a second).")
        var bwlimit: String?

        @Flag(help: "Replace local files even when they changed since r2up last uploaded or downloaded them.")
        var overwrite = false

        @Flag(help: "Print a JSON array of the objects instead of paths.")
        var json = false

        @Argument(help: "An object key, or a prefix such as albums/2026/.")
        var target: String

        @Argument(help: "The folder to download into (default: the current folder).")
        var destination: String = "."

        func validate() throws {
            guard (1...64).contains(concurrency) else {
                throw ValidationError("--concurrency must be from 1 to 64, got \(concurrency)")
            }
            if let bwlimit, ByteSize.parse(bwlimit).map({ $0 > 0 }) != true {
                throw ValidationError("--bwlimit '\(bwlimit)' is not a rate like 500K or 10M")
            }
        }

        func run() async throws {
            let puller: Puller
            let folder: String
            do {
                let settings = try global.settings()
                var options = RunOptions()
                options.concurrency = concurrency
                options.bandwidthLimit = bwlimit.flatMap(ByteSize.parse)
                let service = try UploadService(settings: settings, options: options)
                let store = try Store(path: settings.database.value)
                puller = Puller(service: service, store: store, overwrite: overwrite)
                folder = try Puller.prepareDestination(destination)
            } catch let error as DownloadError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            let plan: PullPlan
            do { plan = try await puller.plan(target) } catch { throw CommandFailure(error.diagnosis) }

            var worst = ExitStatus.success
            for refusal in plan.refused {
                Terminal.error("r2up: \(TextColumns.printable(refusal.diagnosis.message))")
                worst = max(worst, refusal.diagnosis.status)
            }
            let quiet = global.quiet || json
            // Bars on a terminal, as push draws them; the paths print above them.
            let progress = TransferProgress()
            let display = ProgressDisplay.make(for: progress, quiet: quiet)
            display?.start()
            let summary = await puller.run(plan.items, destination: folder, progress: display == nil ? nil : progress) { event in
                switch event {
                case .finished(let outcome):
                    if outcome.result == .downloaded && !quiet {
                        let path = TextColumns.printable(outcome.path)
                        if let display { display.print(path) } else { Terminal.output(path) }
                    }
                case .failed(_, let error):
                    if let display {
                        display.print("r2up: \(TextColumns.printable(error.diagnosis.message))", toStandardError: true)
                    } else {
                        Terminal.error("r2up: \(TextColumns.printable(error.diagnosis.message))")
                    }
                }
            }
            display?.finish()
            for (_, error) in summary.failures { worst = max(worst, error.diagnosis.status) }
            if json {
                let rows = summary.outcomes.sorted { $0.item.key < $1.item.key }.map(PulledObject.init)
                Terminal.output(JSONOutput.encode(rows))
            } else if !global.quiet {
                Terminal.error(summary.line(refused: plan.refused.count))
            }
            if summary.failures.contains(where: { $0.error.diagnosis.status == .configuration }) {
                throw CommandFailure(status: .configuration)
            }
            if worst != .success { throw CommandFailure(status: worst) }
        }
    }
}

/// One entry of `pull --json`.
struct PulledObject: Codable {
    var key: String
    var path: String
    var size: Int64
    var etag: String
    /// downloaded or skipped (an identical file was there).
    var result: String
    /// Bytes found verified on disk from an interrupted run.
    var resumedBytes: Int64

    init(_ outcome: DownloadOutcome) {
        key = outcome.item.key
        path = outcome.path
        size = outcome.item.size
        etag = outcome.item.etag
        result = outcome.result.rawValue
        resumedBytes = outcome.resumedBytes
    }
}
