import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Offload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Free disk space: remove local copies of tracks whose cloud copy is verified now.",
            discussion: """
                Each track named (a folder names its tracks) is checked before its file goes: the file \
                is the copy r2up uploaded (size and mtime as recorded, and its bytes against the content \
                digest when the upload recorded one), its folder may be written, and one HEAD finds the \
                object at its key with the size and ETag recorded at upload. A track failing a check is \
                kept, with one line saying why (exit 1). Offloaded tracks show as cloud only (☁) and keep \
                their history; `r2up fetch` brings them back. Files r2up never uploaded are never removed. \
                Each freed path is printed; a summary goes to stderr.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(
            name: .customLong("older-than"), parsing: .unconditional,
            help: "Only tracks uploaded and unchanged for at least this long (e.g. 90d, 12h).")
        var olderThan: String?

        @Option(name: .customLong("keep-newest"), parsing: .unconditional, help: "Keep the local copies of the N most recently uploaded tracks.")
        var keepNewest = 0

        @Flag(name: .customLong("dry-run"), help: "Check everything (HEADs included) and say what would be freed; remove nothing.")
        var dryRun = false

        @Option(
            parsing: .unconditional,
            help: "Pin the HEAD requests in flight (1-\(RunOptions.maximumConcurrency)); without it the depth adapts to the link.")
        var concurrency: ConcurrencyValue?

        @Flag(help: "Print the outcome as a JSON object.")
        var json = false

        @Argument(help: "Tracks, or folders of tracks, to offload.")
        var paths: [String]

        func validate() throws {
            if paths.isEmpty { throw ValidationError("name the tracks or folders to offload") }
            if let olderThan { _ = try OffloadFlags.age(olderThan, flag: "--older-than") }
            guard keepNewest >= 0 else { throw ValidationError("--keep-newest must be 0 or more, got \(keepNewest)") }
            try concurrency?.check()
        }

        func run() async throws {
            let offloader: Offloader
            do {
                let settings = try global.settings()
                var options = RunOptions()
                options.concurrency = concurrency?.depth
                let service = try UploadService(settings: settings, options: options)
                offloader = Offloader(service: service, database: try LocalStore(path: settings.database.value))
            } catch {
                throw CommandFailure(error)
            }
            let tracks: [StoredTrack]
            do { tracks = try offloader.select(paths) } catch { throw CommandFailure(error.diagnosis) }
            var options = OffloadOptions()
            options.olderThan = try olderThan.map { try OffloadFlags.age($0, flag: "--older-than") }
            options.keepNewest = keepNewest
            options.dryRun = dryRun
            let summary = await OffloadReport.run(offloader, tracks, options: options, quiet: global.quiet, json: json)
            if summary.category != .success { throw CommandFailure(category: summary.category) }
        }
    }
}

/// Parsing of the durations offload flags take.
enum OffloadFlags {
    static func age(_ text: String, flag: String) throws -> Duration {
        guard let age = SyncDuration.parse(text), age >= .zero else {
            throw ValidationError("\(flag) '\(text)' is not a duration of 0 or more, like 90d, 12h or 30m")
        }
        // A bare number would be seconds: `--older-than 90` meant as days would free far too much.
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if age > .zero, let last = trimmed.last, last.isNumber || last == "." {
            throw ValidationError("\(flag) '\(text)' needs a unit: \(trimmed)d (days), \(trimmed)h, \(trimmed)m or \(trimmed)s")
        }
        return age
    }
}

/// The lines an offload prints, shared by `offload` and `--offload-after` of sync and watch.
enum OffloadReport {
    /// Runs the offload, printing each freed path (stdout) and each failed check (stderr) as it
    /// comes, then the summary line (stderr), or the JSON object.
    static func run(
        _ offloader: Offloader, _ tracks: [StoredTrack], options: OffloadOptions, quiet: Bool, json: Bool,
        printsJSON: Bool = true
    ) async -> OffloadSummary {
        let dryRun = options.dryRun
        let summary = await offloader.run(tracks, options: options) { outcome in
            guard !json else { return }
            if let reason = outcome.kept {
                // A server's error waits for the end: when it stopped the run, the stop line says it once.
                if reason.isFailure, reason != .notChecked, !reason.isServerError {
                    Terminal.error("r2up: \(TextColumns.printable(outcome.path)): kept: \(TextColumns.printable(reason.message))")
                }
            } else if !quiet {
                Terminal.output(
                    dryRun ? "would offload \(TextColumns.printable(outcome.path)) (\(ByteCount.string(outcome.size)))"
                        : TextColumns.printable(outcome.path))
            }
        }
        if json {
            if printsJSON { Terminal.output(JSONOutput.encode(OffloadJSON(summary))) }
            return summary
        }
        if let stop = summary.stoppedBy {
            Terminal.error("r2up: \(TextColumns.printable(stop.message)); the rest was kept")
        } else {
            for outcome in summary.kept where outcome.kept?.isServerError == true {
                Terminal.error("r2up: \(TextColumns.printable(outcome.path)): kept: \(TextColumns.printable(outcome.kept?.message ?? ""))")
            }
        }
        if !quiet { Terminal.error(line(summary)) }
        return summary
    }

    /// "Offloaded 3 files (12 MB freed); kept 2: 1 changed since upload, 1 too recent."
    static func line(_ summary: OffloadSummary) -> String {
        let count = summary.freed.count
        let files = "\(count) \(count == 1 ? "file" : "files")"
        var line = summary.dryRun
            ? "Would offload \(files) (\(ByteCount.string(summary.freedBytes)) to free)"
            : "Offloaded \(files) (\(ByteCount.string(summary.freedBytes)) freed)"
        if !summary.kept.isEmpty {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for outcome in summary.kept {
                let label = outcome.kept?.label ?? ""
                if counts[label] == nil { order.append(label) }
                counts[label, default: 0] += 1
            }
            let reasons = order.sorted { (counts[$0] ?? 0, $1) > (counts[$1] ?? 0, $0) }.map { "\(counts[$0] ?? 0) \($0)" }
            line += "; kept \(summary.kept.count): " + reasons.joined(separator: ", ")
        }
        if summary.alreadyCloudOnly > 0 { line += "; \(summary.alreadyCloudOnly) already cloud only" }
        return line + "."
    }
}

extension OffloadReason {
    /// A server's error for the track's HEAD: when it stopped the run, the stop line names it.
    var isServerError: Bool {
        if case .server = self { return true }
        return false
    }

    /// Why the track was kept, after its path.
    var message: String {
        switch self {
        case .tooRecent: "uploaded or changed more recently than --older-than"
        case .keptNewest: "among the --keep-newest newest"
        case .notUploaded: "r2up has no verified cloud copy of it"
        case .otherBucket(let bucket): "its cloud copy is in bucket '\(bucket)', not the one configured"
        case .changedSinceUpload: "changed since its upload (size or mtime); upload it again first"
        case .contentChanged: "its bytes are not the ones uploaded (same size and mtime, other content digest)"
        case .notRegularFile: "not a regular file"
        case .unreadable(let reason): "cannot be read: \(reason)"
        case .folderNotWritable(let reason): "its folder may not be written (\(reason))"
        // `sync` trusts the store and sends neither again: the line names what does.
        case .objectMissing(let key): "the object '\(key)' is no longer in the bucket (r2up push uploads it again)"
        case .objectReplaced(let key, let field, let recorded, let found):
            "the object '\(key)' was replaced: its \(field) is \(found), the upload's was \(recorded) (r2up push --overwrite uploads this file over it)"
        case .server(let diagnosis): diagnosis.message
        case .notChecked: "not checked: the run stopped"
        case .removeFailed(let reason): "cannot be removed: \(reason)"
        }
    }

    /// A few words for the summary's counts.
    var label: String {
        switch self {
        case .tooRecent: "too recent"
        case .keptNewest: "newest"
        case .notUploaded: "not uploaded"
        case .otherBucket: "in another bucket"
        case .changedSinceUpload, .contentChanged: "changed since upload"
        case .notRegularFile, .unreadable: "unreadable"
        case .folderNotWritable: "in a read-only folder"
        case .objectMissing: "missing from the bucket"
        case .objectReplaced: "replaced in the bucket"
        case .server: "server error"
        case .notChecked: "not checked"
        case .removeFailed: "not removable"
        }
    }
}

extension OffloadSelectionError {
    /// Bad arguments are bad input (exit 2); nothing was checked or removed.
    var diagnosis: Diagnosis {
        switch self {
        case .store(let error): return Diagnosis(error)
        case .input(let input):
            let message: String
            switch input {
            case .noSuchPath(let path): message = "\(path): no such file or folder; nothing removed"
            case .outsideLibrary(let path): message = "\(path): r2up has uploaded no track there; nothing removed"
            case .neverUploaded(let path): message = "\(path): r2up never uploaded this file; nothing removed"
            case .notAFileOrFolder(let path): message = "\(path): not a regular file or a folder; nothing removed"
            }
            return Diagnosis(category: .badInput, message: message)
        }
    }
}

/// `offload --json`.
struct OffloadJSON: Encodable {
    struct Track: Encodable {
        var path: String
        var size: Int64
        var reason: String?
        var message: String?
    }

    var dryRun: Bool
    var freedFiles: Int
    var freedBytes: Int64
    var freed: [Track]
    var kept: [Track]
    var alreadyCloudOnly: Int
    var headRequests: Int
    var stoppedBy: String?
    /// The HEADs' requests in flight: settled, peak, why (as in `sync --json`).
    var depth: DepthReport?

    init(_ summary: OffloadSummary) {
        dryRun = summary.dryRun
        freedFiles = summary.freed.count
        freedBytes = summary.freedBytes
        freed = summary.freed.sorted { $0.path < $1.path }.map { Track(path: $0.path, size: $0.size) }
        kept = summary.kept.sorted { $0.path < $1.path }.map { Track(path: $0.path, size: $0.size, reason: $0.kept?.label, message: $0.kept?.message) }
        alreadyCloudOnly = summary.alreadyCloudOnly
        headRequests = summary.requests
        stoppedBy = summary.stoppedBy?.message
        depth = summary.depth
    }
}

/// `--offload-after DURATION` of sync and watch: after the run (a watch: after each full pass),
/// tracks uploaded and unchanged that long are offloaded with the same checks as `r2up offload`.
struct OffloadAfterOptions: ParsableArguments {
    @Option(
        name: .customLong("offload-after"), parsing: .unconditional,
        help: "Then offload tracks uploaded and unchanged for this long (e.g. 30d), checked as `r2up offload` does.")
    var offloadAfter: String?

    func validate() throws {
        if let offloadAfter { _ = try OffloadFlags.age(offloadAfter, flag: "--offload-after") }
    }

    var age: Duration? { offloadAfter.flatMap { try? OffloadFlags.age($0, flag: "--offload-after") } }

    /// Offloads the old enough tracks under `folders`; nil when not asked, or when r2up has
    /// uploaded nothing there yet (nothing to do is no error here).
    static func run(
        age: Duration, folders: [String], service: UploadService, databasePath: String, quiet: Bool, json: Bool
    ) async -> OffloadSummary? {
        let store: LocalStore
        do { store = try LocalStore(path: databasePath) } catch {
            Terminal.error("r2up: offload: \(TextColumns.printable(Diagnosis(error).message))")
            var failed = OffloadSummary()
            failed.stoppedBy = Diagnosis(error)
            return failed
        }
        let offloader = Offloader(service: service, database: store)
        var tracks: [StoredTrack] = []
        for folder in folders {
            // A folder with nothing uploaded yet has nothing to offload: not an error after a sync.
            if let found = try? offloader.select([folder]) { tracks += found }
        }
        var options = OffloadOptions()
        options.olderThan = age
        return await OffloadReport.run(offloader, tracks, options: options, quiet: quiet, json: json, printsJSON: false)
    }
}

extension OffloadAfterOptions {
    /// A run's JSON object with the offload's under "offload": still one JSON document.
    static func merged(_ runJSON: String, _ offloaded: OffloadSummary) -> String {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(runJSON.utf8))) as? [String: Any],
            let offload = try? JSONSerialization.jsonObject(with: Data(JSONOutput.encode(OffloadJSON(offloaded)).utf8))
        else { return runJSON }
        object["offload"] = offload
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return runJSON }
        return String(decoding: data, as: UTF8.self)
    }
}

extension OffloadAfterOptions {
    /// A watch's lines for one offload: each failed check, then the summary when anything happened.
    static func notices(_ summary: OffloadSummary) -> [String] {
        var lines = summary.kept.compactMap { outcome -> String? in
            guard let reason = outcome.kept, reason.isFailure, reason != .notChecked,
                summary.stoppedBy == nil || !reason.isServerError
            else { return nil }
            return "\(outcome.path): kept: \(reason.message)"
        }
        if let stop = summary.stoppedBy { lines.append("offload: \(stop.message); the rest was kept") }
        if !summary.freed.isEmpty || !lines.isEmpty { lines.append(OffloadReport.line(summary)) }
        return lines
    }
}
