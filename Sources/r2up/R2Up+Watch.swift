import ArgumentParser
import Foundation
import Synchronization
import R2UpKit

extension R2Up {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload continuously as files land in folders (until SIGINT or SIGTERM).",
            discussion: """
                A sync pass first, then inotify on every folder (new ones too). A file is taken once it \
                was closed or moved in and has been quiet for --min-age; temporary names never. A full \
                pass runs every --rescan. Holds the sync lock of the database while it runs. Prints each \
                upload's URL, or JSON Lines events with --json. SIGINT/SIGTERM: no new upload starts, \
                those in flight get 10 s to finish (else they are left to resume), exit 0. With --delete, \
                each full pass then removes the objects of files gone or moved, as sync --delete does.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var tagOptions: TagOptions

        @OptionGroup var folderOptions: FolderUploadOptions
        @OptionGroup var offloadPolicy: OffloadAfterOptions

        @Option(name: .customLong("min-age"), parsing: .unconditional, help: "How long a file must be quiet before it is uploaded (e.g. 2s, 500ms; default 2s).")
        var minAge = "2s"

        @Option(parsing: .unconditional, help: "Look at every file this often anyway (e.g. 10m, 1h; default 10m); unchanged files cost no request.")
        var rescan = "10m"

        @Flag(name: .customLong("verify-remote"), help: "At each full pass, list the bucket: upload again what is missing there.")
        var verifyRemote = false

        @Flag(help: "Wait for a sync or watch of the same database to finish instead of exiting 4.")
        var wait = false

        @Flag(help: "Publish the catalog (index.json, index.html) under --prefix each time a batch of uploads settles.")
        var publish = false

        @Flag(help: "Print events as JSON Lines (queued, uploaded, failed, notice, watching, stopped).")
        var json = false

        @Argument(help: "The folders to watch.")
        var folders: [String]

        /// Folders must be quiet no longer than this.
        static let maximumMinAge = Duration.seconds(86_400)

        func validate() throws {
            guard !folders.isEmpty else { throw ValidationError("give at least one folder to watch") }
            guard let age = SyncDuration.parse(minAge) else {
                throw ValidationError("--min-age '\(minAge)' is not a duration like 2s, 500ms or 1m")
            }
            guard age >= .zero, age <= Self.maximumMinAge else {
                throw ValidationError("--min-age must be from 0s to 1d, got \(minAge)")
            }
            guard let every = SyncDuration.parse(rescan) else {
                throw ValidationError("--rescan '\(rescan)' is not a duration like 10m, 1h or 30s")
            }
            guard every >= .seconds(1), every <= .seconds(7 * 86_400) else {
                throw ValidationError("--rescan must be from 1s to 7d, got \(rescan)")
            }
        }

        func run() async throws {
            let template = try tagOptions.template()  // a bad template stops everything before the store or the server
            let settings: Settings
            let service: UploadService
            do {
                settings = try global.settings()
                service = try UploadService(settings: settings, options: transfer.runOptions)
            } catch {
                throw CommandFailure(error)
            }
            var options = watchOptions(template: template)

            // Events are printed by a task of their own: an upload's completion never waits on a pipe.
            let (events, sink) = AsyncStream.makeStream(of: WatchEvent.self)
            let printer = WatchPrinter(json: json, quiet: global.quiet)
            let stop = WatchStop()
            let printing = Task {
                for await event in events {
                    printer.print(event)
                    // The reader went away (| head): stop as on SIGTERM; R2Up.main exits 141.
                    if Terminal.isOutputClosed { stop.request() }
                }
            }
            let reader = Self.watchReader(stop: stop)
            defer { reader.cancel() }
            let settled = publish
                ? catalogPublisher(service: service, database: settings.database.value, printer: printer, sink: sink) : nil
            if let age = offloadPolicy.age {
                let (folders, database) = (folders, settings.database.value)
                options.afterFullPass = {
                    // Said as notices (JSON Lines with --json): stdout stays the uploads' URLs.
                    guard let done = await OffloadAfterOptions.run(
                        age: age, folders: folders, service: service, databasePath: database, quiet: true, json: true)
                    else { return }
                    for line in OffloadAfterOptions.notices(done) { sink.yield(.notice(line)) }
                }
            }
            let runner = WatchRunner(service: service, databasePath: settings.database.value)
            let folders = folders
            let chosen = options
            let onSettled = settled
            let outcome: Result<WatchSummary, any Error> = await WatchSignals.run(stop: stop) {
                do {
                    return .success(
                        try await runner.run(folders, options: chosen, stop: stop, onEvent: { sink.yield($0) }, settled: onSettled))
                } catch {
                    return .failure(error)
                }
            }
            sink.finish()
            await printing.value
            let summary: WatchSummary
            switch outcome {
            case .success(let value): summary = value
            case .failure(let error as SyncError): throw CommandFailure(error.diagnosis)
            case .failure(let error as WatchError): throw CommandFailure(error.diagnosis)
            case .failure(let error): throw CommandFailure(error)
            }
            printer.stopped(summary)
            if global.verbose { Terminal.error("r2up: \(service.depthLine)") }
            if let stopped = summary.stoppedBy { throw CommandFailure(stopped) }
        }

        /// The watch's rules from the flags.
        private func watchOptions(template: KeyTemplate?) -> WatchOptions {
            var options = WatchOptions()
            folderOptions.apply(to: &options.sync)
            options.sync.minAge = SyncDuration.parse(minAge) ?? .seconds(2)
            options.sync.verifyRemote = verifyRemote
            options.sync.waitForLock = wait
            options.sync.keyTemplate = template
            options.sync.tagMetadata = !tagOptions.noTagMetadata
            options.rescanEvery = SyncDuration.parse(rescan) ?? .seconds(600)
            return options
        }

        /// An idle watch prints nothing: look for a reader gone once a second anyway.
        private static func watchReader(stop: WatchStop) -> Task<Void, Never> {
            Task {
                while !Task.isCancelled {
                    if !Terminal.checkOutputReader() {
                        stop.request()
                        return
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }

        /// `--publish`: the catalog republished once uploads settle; a failure is a notice.
        private func catalogPublisher(
            service: UploadService, database: String, printer: WatchPrinter, sink: AsyncStream<WatchEvent>.Continuation
        ) -> @Sendable () async -> Void {
            let prefix = folderOptions.prefix
            return { [printer] in
                do {
                    let store = try LocalStore(path: database)
                    printer.published(try await CatalogCommand.publish(service: service, store: store, prefix: prefix))
                } catch let failure as CommandFailure {
                    sink.yield(.notice("catalog publish: \(failure.diagnosis.message)"))
                } catch {
                    sink.yield(.notice("catalog publish: \(Diagnosis(error).message)"))
                }
            }
        }
    }
}

/// SIGINT and SIGTERM stop a watch: the first asks it to stop taking new files and gives the
/// uploads in flight `grace` to finish, then cancels them (left resumable); a second cancels at once.
enum WatchSignals {
    static let grace = Duration.seconds(10)

    static func run<T: Sendable>(stop: WatchStop, _ body: @escaping @Sendable () async -> T) async -> T {
        await Interruption.run(onSignal: { seen, task in
            stop.request()
            if seen > 1 {
                task.cancel()
                return
            }
            Task {
                try? await Task.sleep(for: grace)
                task.cancel()
            }
        }, body)
    }
}

/// A watch's output: off a terminal one line per upload (its URL, on stdout) and per failure
/// (stderr), no escape codes; with `--json`, one JSON object per event on stdout (JSON Lines).
struct WatchPrinter: Sendable {
    let json: Bool
    let quiet: Bool

    /// One JSON Lines record: `event` names it; the other fields are the event's.
    private struct Record: Encodable {
        var event: String
        var file: String?
        var key: String?
        var size: Int64?
        var url: String?
        var reason: String?
        var message: String?
        var roots: [String]?
        var folders: Int?
        var uploaded: Int?
        var copied: Int?
        /// A copy's source key.
        var from: String?
        var unchanged: Int?
        var failed: Int?
        /// Files the first pass found still being written: uploaded once quiet for --min-age.
        var waiting: Int?
        var leftToResume: Int?
        var tracks: Int?
    }

    private func emit(_ record: Record) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { return }
        Terminal.output(String(decoding: data, as: UTF8.self))
    }

    func print(_ event: WatchEvent) {
        switch event {
        case .queued(let job):
            if json { emit(Record(event: "queued", file: job.queuedFile.path, key: job.queuedFile.key, size: job.queuedFile.size)) }
        case .uploaded(let job, let item):
            if json {
                emit(Record(event: "uploaded", file: job.queuedFile.path, key: item.r2Key, size: item.fileSize, url: item.publicURL.absoluteString))
            } else if !quiet {
                Terminal.output(item.publicURL.absoluteString)
            }
        case .copied(let job, let item):
            if json {
                emit(Record(
                    event: "copied", file: job.queuedFile.path, key: item.r2Key, size: item.fileSize, url: item.publicURL.absoluteString,
                    from: item.copiedFrom))
            } else if !quiet {
                Terminal.output(item.publicURL.absoluteString)
            }
        case .failed(let failure):
            if json {
                emit(Record(event: "failed", file: failure.path, key: failure.key, reason: failure.error))
            } else {
                Terminal.error("r2up: \(TextColumns.printable(failure.path)): \(TextColumns.printable(failure.error))")
            }
        case .notice(let message):
            if json { emit(Record(event: "notice", message: message)) } else { Terminal.error("r2up: \(TextColumns.printable(message))") }
        case .watching(let roots, let folders, let initial):
            if json {
                emit(Record(
                    event: "watching", roots: roots, folders: folders, uploaded: initial.uploaded, copied: initial.copied,
                    unchanged: initial.unchanged,
                    failed: initial.failures.count, waiting: initial.waiting))
            } else if !quiet {
                let names = roots.map(TextColumns.printable).joined(separator: ", ")
                // Young files are not uploaded by the first pass: said, so "0 uploaded" is not a surprise.
                let waiting = initial.waiting > 0 ? ", \(initial.waiting) waiting until quiet for --min-age" : ""
                Terminal.error(
                    "r2up: watching \(folders) \(folders == 1 ? "folder" : "folders") under \(names) (first pass: "
                        + "\(initial.uploaded) uploaded, \(initial.copied > 0 ? "\(initial.copied) copied, " : "")"
                        + "\(initial.unchanged) unchanged\(waiting), \(initial.failures.count) failed)")
            }
        }
    }

    func published(_ result: CatalogPublishResult) {
        if json {
            emit(Record(event: "published", message: CatalogCommand.line(result), tracks: result.tracks))
        } else if !quiet {
            Terminal.error("r2up: \(CatalogCommand.line(result))")
        }
    }

    func stopped(_ summary: WatchSummary) {
        if json {
            emit(Record(
                event: "stopped", reason: summary.stoppedBy?.message, uploaded: summary.uploaded, copied: summary.copied,
                failed: summary.failed, leftToResume: summary.leftResumable))
        } else if !quiet {
            let left = summary.leftResumable > 0 ? "; \(summary.leftResumable) left to resume: the next sync or watch takes them" : ""
            let copied = summary.copied > 0 ? "\(summary.copied) copied, " : ""
            Terminal.error("r2up: watch stopped (\(summary.uploaded) uploaded, \(copied)\(summary.failed) failed\(left))")
        }
    }
}
