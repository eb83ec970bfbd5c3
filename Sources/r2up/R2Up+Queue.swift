import ArgumentParser
import Foundation
import R2UpKit
import R2UpModel
import R2UpStore
import R2UpTransfer

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
                report = try ReadOnlyStore.open(global).map { try QueueReport(store: $0) } ?? .empty
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
            let cancellation: Store.Cancellation
            do {
                let candidates = try store.jobs(in: failed ? [.failedRetryable, .failedPermanent] : UploadJobState.allCases.filter { $0 != .completed })
                let chosen = all || failed ? candidates.map(\.id) : try JobSelection.match(ids, in: candidates, what: "queued upload")
                guard !chosen.isEmpty else {
                    if !global.quiet { Terminal.error("Nothing to cancel.") }
                    return
                }
                cancellation = try store.cancelJobs(chosen)
            } catch let error as SelectionError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            for (job, pid) in cancellation.held {
                Terminal.error("r2up: \(TextColumns.printable(job.key)): another r2up (pid \(pid)) is uploading it; stop it first")
            }
            if !global.quiet {
                for job in cancellation.cancelled { Terminal.output("cancelled \(TextColumns.printable(job.key))") }
            }
            // Their multipart uploads go now when the bucket can be reached, else on the next run.
            if cancellation.cancelled.contains(where: { $0.uploadID != nil }),
                let settings = try? global.settings(), let service = try? UploadService(settings: settings, options: RunOptions())
            {
                let left = await UploadQueue(store: store, service: service).abortAbandonedUploads()
                if left > 0 {
                    Terminal.error("r2up: \(left) multipart upload\(left == 1 ? "" : "s") could not be aborted now; the next run tries again")
                }
            }
            if !cancellation.held.isEmpty { throw CommandFailure(status: .locked) }
        }

        /// The database to write (cancel changes jobs), or nil when there is none: cancelling
        /// never creates one.
        private func openStore() throws -> Store? {
            do {
                let path = try global.settings().database.value
                guard FileManager.default.fileExists(atPath: path) else { return nil }
                return try Store(path: path)
            } catch { throw CommandFailure(error) }
        }
    }
}

extension R2Up {
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Requeue failed uploads and run them now; with --all, pull failed downloads again too.",
            discussion: "Interrupted uploads (their run was killed or stopped) resume too.")

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
            let store: Store
            let service: UploadService
            do {
                let settings = try global.settings()
                store = try Store(path: settings.database.value)
                service = try UploadService(settings: settings, options: transfer.runOptions)
            } catch {
                throw CommandFailure(error)
            }
            let queue = UploadQueue(store: store, service: service)
            let plan: RetryPlan
            do {
                plan = try RetryPlan(store: store, bucket: service.bucket, ids: all ? nil : ids)
            } catch let error as SelectionError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
            guard !plan.isEmpty else {
                if !global.quiet { Terminal.error("Nothing to retry: no upload or download has failed or was interrupted.") }
                return
            }
            var worst = ExitStatus.success
            if !plan.downloads.isEmpty {
                let puller = Puller(service: service, store: store)
                for track in plan.downloads {
                    switch await puller.retry(track) {
                    case .success(let outcome):
                        if !global.quiet { Terminal.output(outcome.path) }
                    case .failure(let error):
                        Terminal.error("r2up: \(TextColumns.printable(error.diagnosis.message))")
                        worst = max(worst, error.diagnosis.status)
                    }
                }
            }
            guard !plan.uploads.isEmpty else {
                if worst != .success { throw CommandFailure(status: worst) }
                return
            }
            let jobs: [UploadJob]
            do { jobs = try plan.requeue(store: store) } catch { throw CommandFailure(error) }
            let quiet = global.quiet
            // A retried audio file carries its tags as the first attempt did.
            let tags = TagResolver(store: store)
            let attributes = tags.attributes(ObjectAttributes(), forPaths: jobs.map(\.path))
            do { try await tags.save() } catch { throw CommandFailure(error) }
            let summary = await Interruption.run {
                await queue.abortAbandonedUploads()
                return await queue.run(jobs, attributes: attributes, admit: { _ in Terminal.admitsMoreWork }) { event in
                    if case .completed(_, let item, _) = event, !quiet { Terminal.output(item.publicURL.absoluteString) }
                }
            }
            for (_, diagnosis) in summary.failed { Terminal.error("r2up: \(TextColumns.printable(diagnosis.message))") }
            for (job, pid) in summary.heldElsewhere {
                Terminal.error("r2up: \(job.path): another r2up (pid \(pid)) is uploading it; see r2up queue")
                worst = max(worst, .locked)
            }
            for line in summary.stopLines { Terminal.error(line) }
            worst = max(worst, summary.status)
            if worst != .success { throw CommandFailure(status: worst) }
        }
    }
}
