import ArgumentParser
import Foundation
import Synchronization
import R2UpKit

extension R2Up {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload files (or a folder's tracks) and print their public URLs.",
            discussion: """
                A folder uploads its tracks that are not uploaded yet, failed, or changed since \
                (hidden files, temporary names such as *.part, *.crdownload or ~*.tmp skipped, links \
                not followed). A folder keeps its name, as cp -r and rsync do: push "Artist/Album (2019)" \
                makes keys under Album (2019)/; push DIR/ (a trailing /) pushes its contents. URLs print in \
                track order (disc, track number, name); a folder push ends with one summary line on stderr. \
                --dry-run lists what would be uploaded, copied or skipped and sends nothing.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var tagOptions: TagOptions

        @Option(help: "Object key (one file only; default: the prefix and the file's name).")
        var key: String?

        @Option(help: "Key prefix, e.g. albums/2026/.")
        var prefix: String?

        @Option(name: .customLong("content-type"), help: "Content type (default: from the extension).")
        var contentType: String?

        @Option(name: .customLong("cache-control"), help: "Cache-Control header for the objects.")
        var cacheControl: String?

        @Option(name: .customLong("meta"), help: ArgumentHelp("User metadata stored with each object (x-amz-meta-KEY); repeatable.", valueName: "KEY=VALUE"))
        var meta: [String] = []

        /// `--meta`, checked by `validate()`.
        var metadata: [String: String] { UserMetadata.parse(meta) }

        @Flag(name: .customLong("retry-failed"), help: "For folders: upload only the tracks whose last upload failed.")
        var retryFailed = false

        @Flag(help: "Print JSON instead of URLs: an array of the uploads (with --dry-run, the plan as one object).")
        var json = false

        @Flag(name: .customLong("dry-run"), help: "List what would be uploaded, copied or skipped; send nothing.")
        var dryRun = false

        @OptionGroup var replace: ReplaceOptions

        @Argument(help: "Files or folders to upload.")
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one file to push") }
            if key != nil && files.count > 1 { throw ValidationError("--key needs exactly one file") }
            if key != nil && tagOptions.keyTemplate != nil { throw ValidationError("give --key or --key-template, not both") }
            if let problem = UserMetadata.problem(meta) { throw ValidationError(problem) }
            try HeaderFlags.check(["--content-type": contentType, "--cache-control": cacheControl])
            if let prefix, let problem = ObjectKey.prefixProblem(prefix) { throw ValidationError(problem) }
            if let key {
                if let problem = KeyRule.problem(key) { throw ValidationError("--key: \(problem)") }
            }
        }

        func run() async throws {
            let template = try tagOptions.template()  // a bad template stops everything before the store or the server
            let runner: PushRunner
            do {
                let settings = try global.settings()
                let service = try UploadService(settings: settings, options: transfer.runOptions)
                // The server is named while the store opens (a new one: its tables made) and the files are planned.
                if !dryRun { service.nameServerAhead(replace: replace.policy) }
                runner = PushRunner(database: try LocalStore(path: settings.database.value), service: service)
            } catch {
                throw CommandFailure(error)
            }
            var request = PushRunner.Request(paths: files)
            request.undecodable = RawArguments.notUTF8()
            request.key = key
            request.prefix = prefix
            request.template = template
            request.onlyFailed = retryFailed
            request.contentType = contentType
            request.cacheControl = cacheControl
            request.metadata = metadata
            request.tagMetadata = !tagOptions.noTagMetadata
            request.replace = replace.policy
            request.folderNames = true
            if dryRun {
                try preview(request, runner: runner)
                return
            }
            let started = ContinuousClock.now
            let quiet = global.quiet || json
            let progress = TransferProgress(limit: transfer.runOptions.bandwidthLimit)
            let display = ProgressDisplay.make(for: progress, quiet: quiet)
            let result: PushRunner.Summary
            // Printed (and listed by --json) in track order once the run ends, whatever order
            // the uploads finished in.
            let uploads = Mutex<[(path: String, item: UploadItem)]>([])
            do {
                result = try await runner.run(
                    request, progress: display == nil ? nil : progress,  // counted only when drawn
                    interruptible: { body in
                        display?.start()
                        let summary = await Interruption.run(body)
                        display?.finish()
                        return summary
                    },
                    admit: { _ in Terminal.checkOutputReader() },  // a closed stdout starts nothing new
                    onNotice: { notice in say(notice) }
                ) { event in
                    if let done = event.completedUpload { uploads.withLock { $0.append(done) } }
                }
            } catch {
                throw CommandFailure(error.diagnosis)
            }
            let summary = result.run
            let ordered = PushOrder.sorted(uploads.withLock { $0 }, path: \.path, store: runner.store).map(\.item)
            if !quiet { for item in ordered { Terminal.output(item.publicURL.absoluteString) } }
            for (_, diagnosis) in summary.failed { Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))") }
            for line in summary.stopLines { Terminal.error(TextColumns.printable(line)) }
            if global.verbose { Terminal.error("r2up: \(runner.service.depthLine)") }
            if json {
                let depth = runner.service.depthReport
                let items = Self.trackOrder(summary.completed, as: ordered).map {
                    PushedFile(
                        file: $0.fileName, key: $0.r2Key, url: $0.publicURL.absoluteString, size: $0.fileSize,
                        etag: $0.etag ?? "", id: $0.id, depth: depth)
                }
                Terminal.output(JSONOutput.encode(items))
            }
            // A run that stopped or was interrupted has said so in its one line.
            if result.hasFolders && !quiet && !Terminal.isOutputClosed && summary.stoppedBy == nil && !summary.interrupted {
                Terminal.error(PushLine.text(result, seconds: (ContinuousClock.now - started) / .seconds(1)))
            }
            if result.category != .success { throw CommandFailure(category: result.category) }
        }

        /// `completed` in the order of `ordered` (the run's uploads in track order); any it
        /// lacks follow in their own order.
        static func trackOrder(_ completed: [UploadItem], as ordered: [UploadItem]) -> [UploadItem] {
            var rank: [UUID: Int] = [:]
            for (index, item) in ordered.enumerated() where rank[item.id] == nil { rank[item.id] = index }
            return completed.enumerated()
                .sorted { (rank[$0.element.id] ?? Int.max, $0.offset) < (rank[$1.element.id] ?? Int.max, $1.offset) }
                .map(\.element)
        }

        /// Up to this many files held by another r2up are named; more are counted.
        static let heldNamedOneByOne = 3

        /// One notice of the push on stderr (a folder with nothing to push only when not quiet).
        private func say(_ notice: PushRunner.Notice) {
            switch notice {
            case .nothingToPush(let line):
                if !global.quiet { Terminal.error(line) }
            case .skipped(let problem):
                Terminal.error("r2up: \(problem.path): \(problem.message)")
            case .moveRefused(let diagnosis), .notQueued(let diagnosis):
                Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))")
            case .heldByOtherRun(let pid, let paths):
                // Files another live r2up is uploading (two pushes of one folder): named one by
                // one when few, else counted in one line.
                if paths.count <= Self.heldNamedOneByOne {
                    for path in paths {
                        Terminal.error("r2up: \(TextColumns.printable(path)): another r2up (pid \(pid)) is uploading it; see r2up queue")
                    }
                } else {
                    Terminal.error("r2up: \(paths.count) files of this push: another r2up (pid \(pid)) is uploading them; see r2up queue")
                }
            case .conflict(let conflict):
                Terminal.error("r2up: \(TextColumns.printable(conflict.diagnosis.message))")
            }
        }
    }
}

/// `--overwrite` and `--no-clobber` of push and sync.
struct ReplaceOptions: ParsableArguments {
    @Flag(help: "Replace the object at a file's key even when another track's upload (or anything else) is there.")
    var overwrite = false

    @Flag(name: .customLong("no-clobber"), help: "Never replace an existing object, whoever wrote it.")
    var noClobber = false

    func validate() throws {
        if overwrite && noClobber { throw ValidationError("give --overwrite or --no-clobber, not both") }
    }

    var policy: ReplacePolicy { overwrite ? .overwrite : noClobber ? .noClobber : .guarded }
}

/// One entry of `push --json`.
struct PushedFile: Codable {
    /// The file's name, as the history keeps it.
    var file: String
    var key: String
    var url: String
    var size: Int64
    var etag: String
    var id: UUID
    /// The run's requests in flight (settled, peak, why): the same in every entry, so the
    /// array stays an array.
    var depth: DepthReport?
}
