import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download an object, or every object under a prefix, into a folder (or a file, or stdout).",
            discussion: """
                KEY downloads one object into DEST under its own name when DEST is a folder (one that \
                exists, or a name ending in /), else to the file DEST names; - writes it to standard \
                output (as r2up cat KEY). Ctrl-C or SIGTERM stops the pull: it says how many objects are \
                left, erases the bars and exits 130 (143); the same pull resumes them. A PREFIX (ending in /, or a name \
                that is no object) downloads everything under it, keeping the folders below the prefix. \
                Large objects come as parallel 8 MiB ranged GETs into a hidden temporary file that is \
                renamed into place once its bytes match the object: the MD5 of a single-part ETag, the \
                MD5 of the parts' MD5s of a multipart one (part sizes from the store or the server), or a \
                checksum the server keeps; damaged bytes are fetched again (3 times in all), never kept, \
                and one line says how many files could be checked by size only. An \
                interrupted pull resumes from the parts verified on disk. A file already identical is \
                skipped. A local file that changed since r2up last uploaded or downloaded it is not \
                replaced: it is named and counted as failed (exit 1) unless --overwrite. Keys with '..', a leading '/' or a backslash are refused. Each downloaded path \
                is printed; a summary goes to stderr.
                """)

        @OptionGroup var global: GlobalOptions

        @OptionGroup var transfer: DownloadOptions

        @Flag(help: "Replace local files even when they changed since r2up last uploaded or downloaded them.")
        var overwrite = false

        @Flag(help: "Print a JSON array of the objects instead of paths.")
        var json = false

        @Argument(help: "An object key, or a prefix such as albums/2026/.")
        var target: String

        @Argument(help: "Where to put it: a folder (one that exists, or ending in /; default: the current folder), a file name for a single KEY, or - for standard output.")
        var destination: String = "."

        func run() async throws {
            let (_, service, store) = try global.open(transfer.runOptions)
            let puller = Puller(service: service, database: store, overwrite: overwrite)
            let plan: PullPlan
            do { plan = try await puller.plan(target) } catch { throw CommandFailure(await service.diagnose(error, subject: nil)) }
            let single = plan.refused.isEmpty && plan.items.count == 1 && plan.items[0].key == target
            if destination == "-" {
                guard single else {
                    throw CommandFailure(Diagnosis(
                        category: .badInput,
                        message: "pull \(TextColumns.printable(target)) -: only one object can go to standard output, and this names a folder"))
                }
                try await PullOutput.stream(plan.items[0], puller: puller, quiet: global.quiet)
                return
            }
            let (folder, items) = try destinationFolder(plan, single: single)

            var worst = FailureCategory.success
            for refusal in plan.refused {
                Terminal.error("r2up: \(TextColumns.printable(DownloadFailure.diagnosis(refusal).message))")
                worst = max(worst, DownloadFailure.diagnosis(refusal).category)
            }
            let summary = await pull(items, into: folder, puller: puller)
            if summary.interrupted {
                // As push: one line saying what the same command resumes, then 130 (143 for SIGTERM).
                let left = summary.leftResumable == 1 ? "1 download is" : "\(summary.leftResumable) downloads are"
                Terminal.error("r2up: interrupted; \(left) left to resume: run the same pull again")
                throw CommandFailure(category: .interrupted)
            }
            for (_, error) in summary.failures { worst = max(worst, DownloadFailure.diagnosis(error).category) }
            report(summary, refused: plan.refused.count, puller: puller)
            if summary.failures.contains(where: { DownloadFailure.diagnosis($0.error).category == .configuration }) {
                throw CommandFailure(category: .configuration)
            }
            if worst != .success { throw CommandFailure(category: worst) }
        }

        /// The folder the objects go to, made if need be, and the items to pull there: `pull KEY
        /// FILE` names the one object's file. A single object whose path is a folder is refused.
        private func destinationFolder(_ plan: PullPlan, single: Bool) throws(CommandFailure) -> (String, [PullItem]) {
            var items = plan.items
            let folder: String
            do {
                if single, let file = PullOutput.fileName(destination) {
                    // `pull KEY FILE`: the object lands under that name, as cp would put it.
                    items[0].relativePath = (file as NSString).lastPathComponent
                    folder = try Puller.prepareDestination((file as NSString).deletingLastPathComponent)
                } else {
                    folder = try Puller.prepareDestination(destination)
                }
                try Puller.checkWritable(items, in: folder)
            } catch {
                throw CommandFailure(DownloadFailure.diagnosis(error))
            }
            if single {
                let path = folder + "/" + items[0].relativePath
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                    throw CommandFailure(Diagnosis(
                        category: .badInput,
                        message: "\(TextColumns.printable(path)): is a folder, not a file; nothing was written (give a file name, or pull into another folder)"))
                }
            }
            return (folder, items)
        }

        /// Downloads the items, each path printed as it lands and each failure as it comes.
        private func pull(_ items: [PullItem], into folder: String, puller: Puller) async -> PullSummary {
            let quiet = global.quiet || json
            // Bars on a terminal, as push draws them; the paths print above them.
            let progress = TransferProgress(limit: transfer.runOptions.bandwidthLimit)
            let display = ProgressDisplay.make(for: progress, quiet: quiet)
            display?.start()
            let summary = await Interruption.run {
                await puller.run(items, destination: folder, progress: display == nil ? nil : progress) { event in
                    switch event {
                    case .finished(let outcome):
                        if outcome.result == .downloaded && !quiet {
                            let path = TextColumns.printable(outcome.path)
                            if let display { display.print(path) } else { Terminal.output(path) }
                        }
                    case .failed(_, let error):
                        if let display {
                            display.print("r2up: \(TextColumns.printable(DownloadFailure.diagnosis(error).message))", toStandardError: true)
                        } else {
                            Terminal.error("r2up: \(TextColumns.printable(DownloadFailure.diagnosis(error).message))")
                        }
                    }
                }
            }
            display?.finish()
            return summary
        }

        /// The JSON rows, or the summary line; and the files checked by size only.
        private func report(_ summary: PullSummary, refused: Int, puller: Puller) {
            if json {
                let rows = summary.outcomes.sorted { $0.item.key < $1.item.key }.map(PulledObject.init)
                Terminal.output(JSONOutput.encode(rows))
            } else if !global.quiet {
                Terminal.error(summary.line(refused: refused))
                if global.verbose { Terminal.error("r2up: \(puller.depthLine)") }
            }
            // Every file is checked against the object's ETag or checksum; say so when one could not be.
            let unverified = summary.outcomes.compactMap(\.unverified)
            if !unverified.isEmpty && !global.quiet {
                let count = unverified.count == 1 ? "1 file was" : "\(unverified.count) files were"
                Terminal.error(
                    "r2up: \(count) checked by size only: \(Set(unverified).sorted().joined(separator: "; "))")
            }
        }
    }

    struct Cat: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write one object to standard output (the same as pull KEY -).",
            discussion: "The object is fetched and verified (size, and MD5 when the ETag is one) before a byte is written.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The object's key.")
        var key: String

        func run() async throws {
            let puller: Puller
            do {
                let settings = try global.settings()
                puller = Puller(service: try UploadService(settings: settings, options: RunOptions()), database: nil)
            } catch {
                throw CommandFailure(error)
            }
            let plan: PullPlan
            do { plan = try await puller.plan(key) } catch { throw CommandFailure(await puller.service.diagnose(error, subject: nil)) }
            guard plan.refused.isEmpty, plan.items.count == 1, plan.items[0].key == key else {
                throw CommandFailure(Diagnosis(
                    category: .badInput, message: "cat \(TextColumns.printable(key)): names a folder, not an object; cat writes one object"))
            }
            try await PullOutput.stream(plan.items[0], puller: puller, quiet: global.quiet)
        }
    }
}

/// Where `pull KEY DEST` puts the object, and `pull KEY -`.
enum PullOutput {
    /// The file DEST names, or nil when DEST is a folder to pull into: one that exists, the
    /// current folder, or a name ending in /.
    static func fileName(_ destination: String) -> String? {
        guard !destination.hasSuffix("/"), destination != ".", destination != ".." else { return nil }
        let path = URL(fileURLWithPath: destination).standardizedFileURL.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { return nil }
        return path
    }

    /// Writes the object to stdout; Ctrl-C ends it as pull does (nothing left to resume: no file was made).
    static func stream(_ item: PullItem, puller: Puller, quiet: Bool) async throws {
        let failure = await Interruption.run { () -> (any Error)? in
            do { try await puller.stream(item, to: STDOUT_FILENO) } catch { return error }
            return nil
        }
        if let error = failure {
            if DownloadFailure.isCancellation(error) { throw CommandFailure(Diagnosis(category: .interrupted, message: "interrupted")) }
            // The reader went away (| head -c): end quietly with 141, as every command does.
            if !Terminal.checkOutputReader() {
                Foundation.exit(Terminal.closedOutputStatus)
            }
            throw CommandFailure(await puller.service.diagnose(error, subject: nil))
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
    /// Checked against the object's ETag or checksum (false: by size only; skipped files: true).
    var verified: Bool

    init(_ outcome: DownloadOutcome) {
        key = outcome.item.key
        path = outcome.path
        size = outcome.item.size
        etag = outcome.item.etag
        result = outcome.result.rawValue
        resumedBytes = outcome.resumedBytes
        verified = outcome.unverified == nil
    }
}
