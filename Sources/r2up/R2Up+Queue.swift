import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Queue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the upload queue, or cancel queued uploads.",
            subcommands: [Show.self, Cancel.self],
            defaultSubcommand: Show.self)
    }
}

extension R2Up.Queue {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the upload queue: uploading now, interrupted, up next, failed, last completed.",
            discussion: """
                A job is uploading only while a live r2up works on it; one whose run was killed or \
                stopped is interrupted and resumes (from its finished parts) on the next push, sync or retry.
                """)

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the queue as JSON.")
        var json = false

        @Flag(help: "Keep showing the queue, refreshed every --interval: in place on a terminal, else one report (or with --json one JSON line) each time.")
        var watch = false

        @Option(help: ArgumentHelp("Seconds between refreshes with --watch: 0.1 to 3600, default 1.", valueName: "seconds"))
        var interval: Double?

        func validate() throws {
            guard let interval else { return }
            if !watch { throw ValidationError("--interval goes with --watch") }
            if !interval.isFinite || interval < 0.1 || interval > 3600 {
                throw ValidationError("--interval must be from 0.1 to 3600 seconds")
            }
        }

        func run() async throws {
            if watch {
                try await QueueWatch(global: global, interval: interval ?? 1, json: json).run()
                return
            }
            let report: QueueReport
            do {
                report = try ReadOnlyStore.open(global).map { try QueueReport(database: $0) } ?? .empty
            } catch {
                throw CommandFailure(error)
            }
            if json {
                Terminal.output(JSONOutput.encode(report))
                return
            }
            for line in QueueListing().lines(report) { Terminal.output(line) }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop queued or failed uploads, aborting their multipart uploads on the server.",
            discussion: """
                Their tracks become not uploaded. An upload another r2up is working on is left to it.
                """)

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Drop every failed upload.")
        var failed = false

        @Flag(help: "Drop every upload that is not completed.")
        var all = false

        @Argument(help: "Job ids (or their first 8 characters) from r2up queue.")
        var ids: [String] = []

        func validate() throws {
            let choices = (ids.isEmpty ? 0 : 1) + (failed ? 1 : 0) + (all ? 1 : 0)
            if choices == 0 { throw ValidationError("give job ids from 'r2up queue', --failed or --all") }
            if choices > 1 { throw ValidationError("give job ids, --failed or --all: one of them") }
        }

        func run() async throws {
            guard let store = try openStore() else {
                if !global.quiet { Terminal.error("Nothing to cancel: the queue is empty.") }
                return
            }
            let cancellation: QueueCancellation
            do {
                cancellation = try store.cancelJobs(all ? .all : failed ? .failed : .ids(ids))
                guard !cancellation.cancelled.isEmpty || !cancellation.held.isEmpty else {
                    if !global.quiet { Terminal.error("Nothing to cancel.") }
                    return
                }
            } catch let error as SelectionError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            for (key, pid) in cancellation.held {
                Terminal.error("r2up: \(TextColumns.printable(key)): another r2up (pid \(pid)) is uploading it; stop it first")
            }
            if !global.quiet {
                for key in cancellation.cancelled { Terminal.output("cancelled \(TextColumns.printable(key))") }
            }
            // Their multipart uploads go now when the bucket can be reached, else on the next run.
            if cancellation.abandonedMultipart,
                let settings = try? global.settings(), let service = try? UploadService(settings: settings, options: RunOptions())
            {
                let left = await store.abortAbandonedUploads(service: service)
                if left > 0 {
                    Terminal.error("r2up: \(left) multipart upload\(left == 1 ? "" : "s") could not be aborted now; the next run tries again")
                }
            }
            if !cancellation.held.isEmpty { throw CommandFailure(category: .locked) }
        }

        /// The database to write (cancel changes jobs), or nil when there is none: cancelling
        /// never creates one.
        private func openStore() throws -> LocalStore? {
            do {
                return try LocalStore.openIfPresent(path: try global.settings().database.value)
            } catch { throw CommandFailure(error) }
        }
    }
}

extension R2Up {
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Requeue failed uploads and run them now; with --all, pull failed downloads again too.",
            discussion: """
                Interrupted uploads (their run was killed or stopped) resume too. With --all, a failed \
                fetch (a track r2up uploaded or offloaded) is fetched again as r2up fetch does: from \
                its recorded key, checked against the size, ETag and content digest recorded at upload, \
                in place only when complete; an object replaced since is refused again, never brought \
                back as the track. A failed pull is pulled again as r2up pull does: the object now at \
                its key. A file at a failed fetch's path is never fetched over.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions

        @Flag(help: "Retry every failed or interrupted upload and every failed download.")
        var all = false

        @Argument(help: "Job ids (or their first 8 characters) from r2up queue.")
        var ids: [String] = []

        func validate() throws {
            if ids.isEmpty && !all { throw ValidationError("give job ids from 'r2up queue', or --all") }
            if !ids.isEmpty && all { throw ValidationError("give job ids or --all, not both") }
        }

        func run() async throws {
            let runner: RetryRunner
            do {
                let settings = try global.settings()
                let store = try LocalStore(path: settings.database.value)
                runner = RetryRunner(database: store, service: try UploadService(settings: settings, options: transfer.runOptions))
            } catch {
                throw CommandFailure(error)
            }
            let quiet = global.quiet
            let result: RetryRunner.Summary
            do {
                result = try await runner.run(
                    ids: all ? nil : ids, interruptible: { await Interruption.run($0) },
                    admit: { _ in Terminal.admitsMoreWork },
                    onNotice: { notice in
                        switch notice {
                        case .nothingToRetry:
                            if !quiet { Terminal.error("Nothing to retry: no upload or download has failed or was interrupted.") }
                        case .pulled(let path):
                            if !quiet { Terminal.output(path) }
                        case .pullFailed(let diagnosis):
                            Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))")
                        case .onDisk(let path):
                            if !quiet {
                                Terminal.error("r2up: \(TextColumns.printable(path)): a file is at its path; not fetched over (see r2up status)")
                            }
                        }
                    }
                ) { event in
                    if case .completed(_, let item, _) = event, !quiet { Terminal.output(item.publicURL.absoluteString) }
                }
            } catch {
                throw CommandFailure(error.diagnosis)
            }
            if let summary = result.run {
                for (_, diagnosis) in summary.failed { Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))") }
                for (job, pid) in summary.heldElsewhere {
                    Terminal.error("r2up: \(job.queuedFile.path): another r2up (pid \(pid)) is uploading it; see r2up queue")
                }
                for line in summary.stopLines { Terminal.error(line) }
            }
            if result.category != .success { throw CommandFailure(category: result.category) }
        }
    }
}
