import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload what is new or changed under a folder (for cron).",
            discussion: """
                Unchanged files cost no request: their size and mtime are compared with the last \
                upload in the database. Files changed in the last --min-age wait for the next run. \
                One sync per database at a time (exit 4). Prints one summary line. The keys are the \
                paths inside the folder (DIR and DIR/ alike) under --prefix. --delete removes from the \
                bucket the objects r2up uploaded from files now gone or moved, never another's; it \
                refuses an empty or unreadable folder (exit 2), and more than 10% of the folder's \
                objects at once without --delete-max N or --force (exit 1, nothing deleted). A gone file's \
                object stays while a new file of its size waits for --min-age (maybe its rename: the next \
                run copies it as a move).
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var tagOptions: TagOptions

        @OptionGroup var folderOptions: FolderUploadOptions
        @OptionGroup var offloadPolicy: OffloadAfterOptions

        @Flag(name: .customLong("dry-run"), help: "Print what would be uploaded; change neither the bucket nor the database.")
        var dryRun = false

        @Option(name: .customLong("min-age"), parsing: .unconditional, help: "Skip files changed more recently than this (e.g. 10s, 2m; default 10s).")
        var minAge = "10s"

        @Flag(name: .customLong("verify-remote"), help: "List the bucket: upload again what is missing there; record objects with no local file.")
        var verifyRemote = false

        @Flag(help: "Wait for another sync of the same database to finish instead of exiting 4.")
        var wait = false

        @Flag(help: "Then publish the catalog (index.json, index.html) under --prefix, as `catalog publish` does.")
        var publish = false

        @Flag(help: "Print the summary as a JSON object.")
        var json = false

        @Argument(help: "The folder to sync.")
        var folder: String

        func validate() throws {
            guard let age = SyncDuration.parse(minAge) else {
                throw ValidationError("--min-age '\(minAge)' is not a duration like 10s, 2m or 1h")
            }
            guard age >= .zero, age <= Self.maximumMinAge else {
                throw ValidationError("--min-age must be from 0s to 365d, got \(minAge)")
            }
        }

        static let maximumMinAge = Duration.seconds(365 * 86_400)

        func run() async throws {
            _ = try tagOptions.template()  // a bad template stops everything before the store or the server
            let settings: Settings
            let service: UploadService
            do {
                settings = try global.settings()
                service = try UploadService(settings: settings, options: transfer.runOptions)
            } catch {
                throw CommandFailure(error)
            }
            var options = SyncOptions()
            folderOptions.apply(to: &options)
            options.minAge = SyncDuration.parse(minAge) ?? .seconds(10)
            options.dryRun = dryRun
            options.verifyRemote = verifyRemote
            options.waitForLock = wait
            options.keyTemplate = try tagOptions.template()
            options.tagMetadata = !tagOptions.noTagMetadata
            let progress = TransferProgress(limit: transfer.runOptions.bandwidthLimit)
            let display = ProgressDisplay.make(for: progress, quiet: global.quiet || json || dryRun)
            if display != nil { options.progress = progress }  // counted only when drawn
            display?.start()
            let runner = SyncRunner(service: service, databasePath: settings.database.value)
            let summary: SyncSummary
            let folder = folder
            let chosen = options
            do {
                defer { display?.finish() }
                let outcome: Result<SyncSummary, any Error> = await Interruption.run {
                    do { return .success(try await runner.run(folder, options: chosen)) } catch { return .failure(error) }
                }
                summary = try outcome.get()
            } catch let error as SyncError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            // --offload-after: once the run is done, with the same checks as `r2up offload`.
            let offloading = offloadPolicy.age != nil && !dryRun && summary.stoppedBy == nil && !summary.interrupted
            if !(json && offloading) { report(summary) }
            var offloadCategory = FailureCategory.success
            if offloading, let age = offloadPolicy.age,
                let offloaded = await OffloadAfterOptions.run(
                    age: age, folders: [folder], service: service, databasePath: settings.database.value, quiet: global.quiet, json: json)
            {
                offloadCategory = offloaded.category
                if json { Terminal.output(OffloadAfterOptions.merged(JSONOutput.encode(summary), offloaded)) }
            }
            if publish && !dryRun && summary.category != .configuration {
                let store: LocalStore
                do { store = try LocalStore(path: settings.database.value) } catch { throw CommandFailure(error) }
                let result = try await CatalogCommand.publish(service: service, store: store, prefix: folderOptions.prefix)
                if !global.quiet && !json { Terminal.output(CatalogCommand.line(result)) }
            }
            let category = max(summary.category, offloadCategory)
            if category != .success { throw CommandFailure(category: category) }
        }

        private func report(_ summary: SyncSummary) {
            if global.verbose, let depth = summary.depthLine { Terminal.error("r2up: \(depth)") }
            if json {
                Terminal.output(JSONOutput.encode(summary))
                return
            }
            for problem in summary.problems { Terminal.error("r2up: \(TextColumns.printable(problem.path)): \(TextColumns.printable(problem.message))") }
            for failure in summary.failures { Terminal.error("r2up: \(TextColumns.printable(failure.path)): \(TextColumns.printable(failure.error))") }
            if let refused = summary.deletionRefused { Terminal.error("r2up: --delete: \(TextColumns.printable(refused))") }
            if let line = RunEnding.line(
                stoppedBy: summary.stoppedBy, interrupted: summary.interrupted, leftResumable: summary.leftResumable,
                resume: "the next sync takes them")
            {
                Terminal.error("r2up: \(TextColumns.printable(line))")
            }
            guard !global.quiet else { return }
            for file in summary.planned {
                if let source = file.copyOf {
                    Terminal.output(
                        "would copy \(TextColumns.printable(source)) to \(TextColumns.printable(file.key)) (\(ByteCount.string(file.size)), moved)")
                } else {
                    Terminal.output("would upload \(TextColumns.printable(file.key)) (\(ByteCount.string(file.size)), \(file.reason.rawValue))")
                }
            }
            for deletion in summary.deletions {
                let why = deletion.reason == "moved" ? "moved" : "file gone"
                Terminal.output("\(dryRun ? "would delete" : "deleted") \(TextColumns.printable(deletion.key)) (\(why))")
            }
            for kept in summary.kept {
                Terminal.output("\(dryRun ? "would keep" : "kept") \(TextColumns.printable(kept.key)) (\(SyncSummary.keptWhy))")
            }
            Terminal.output(summary.line)
        }
    }
}
