import ArgumentParser
import Foundation
import Uploader

extension R2Up {
    struct Queue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the upload queue: uploading now, up next, failed, last completed.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the queue as JSON.")
        var json = false

        func run() async throws {
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
            var header = "\(report.counts.queued) queued · \(report.counts.uploading) uploading · \(report.counts.failed) failed"
            if let error = report.lastError { header += " — last error: \(error)" }
            Terminal.output(header)
            if !report.uploading.isEmpty {
                Terminal.output("\nUploading now")
                for entry in report.uploading {
                    let percent = entry.size > 0 ? Int(Double(entry.bytesSent) / Double(entry.size) * 100) : 100
                    Terminal.output(
                        "  ↑ \(entry.key)  \(ByteCount.string(entry.bytesSent)) of \(ByteCount.string(entry.size)) (\(percent)%)")
                }
            }
            if !report.upNext.isEmpty {
                Terminal.output("\nUp next")
                for (index, entry) in report.upNext.enumerated() {
                    Terminal.output("  \(index + 1). \(entry.key)  \(ByteCount.string(entry.size))")
                }
            }
            if !report.failed.isEmpty {
                Terminal.output("\nFailed")
                for entry in report.failed {
                    let when =
                        entry.state == UploadJobState.failedPermanent.rawValue
                        ? "waits for r2up retry"
                        : entry.nextAttemptAt.map { "next attempt \(Self.format($0))" } ?? "retried on the next run"
                    Terminal.output("  ⚠ \(entry.key) (\(entry.id.uuidString.prefix(8).lowercased())): \(entry.lastError ?? "failed"); \(when)")
                }
            }
            if let last = report.lastCompleted {
                Terminal.output("\nLast completed\n  \(last.r2Key)  \(last.formattedFileSize)  \(Self.format(last.uploadDate))  \(last.publicURL.absoluteString)")
            }
        }

        static func format(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd HH:mm"
            return formatter.string(from: date)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Requeue failed uploads and run them now; with --all, pull failed downloads again too.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions

        @Flag(help: "Retry every failed upload and every failed download.")
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
            // Failed downloads are retried with --all too (DESIGN §7: download states mirror upload states).
            let failedDownloads = all ? ((try? store.failedDownloads()) ?? []).filter { $0.bucket == service.bucket } : []
            let failed = (try? store.failedJobs()) ?? []
            var chosen: [UUID] = []
            if all {
                chosen = failed.map(\.id)
            } else {
                for text in ids {
                    let matches = failed.filter { $0.id.uuidString.lowercased().hasPrefix(text.lowercased()) }
                    guard matches.count == 1 else {
                        throw CommandFailure(
                            Diagnosis(
                                status: .badInput,
                                message: matches.isEmpty
                                    ? "no failed upload has the id '\(text)'; see r2up queue"
                                    : "the id '\(text)' matches \(matches.count) failed uploads; give more of it"))
                    }
                    chosen.append(matches[0].id)
                }
            }
            guard !chosen.isEmpty || !failedDownloads.isEmpty else {
                if !global.quiet { Terminal.error("Nothing to retry: no upload or download has failed.") }
                return
            }
            var worst = ExitStatus.success
            if !failedDownloads.isEmpty {
                let puller = Puller(service: service, store: store)
                for track in failedDownloads {
                    switch await puller.retry(track) {
                    case .success(let outcome):
                        if !global.quiet { Terminal.output(outcome.path) }
                    case .failure(let error):
                        Terminal.error("r2up: \(error.diagnosis.message)")
                        worst = max(worst, error.diagnosis.status)
                    }
                }
            }
            guard !chosen.isEmpty else {
                if worst != .success { throw CommandFailure(status: worst) }
                return
            }
            do { _ = try store.requeue(ids: chosen) } catch { throw CommandFailure(error) }
            let jobs = chosen.compactMap { try? store.job(id: $0) }
            let queue = UploadQueue(store: store, service: service)
            let quiet = global.quiet
            let summary = await queue.run(jobs, attributes: ObjectAttributes(), admit: { _ in Terminal.admitsMoreWork }) { event in
                if case .completed(_, let item, _) = event, !quiet { Terminal.output(item.publicURL.absoluteString) }
            }
            for (_, diagnosis) in summary.failed {
                Terminal.error("r2up: \(diagnosis.message)")
                worst = max(worst, diagnosis.status)
            }
            if worst != .success { throw CommandFailure(status: worst) }
        }
    }
}
