import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show each track's upload and download state, grouped by album or folder.",
            discussion: """
                Icons, most urgent first: ↑ orange uploading, ⚠ red upload error, ⇣ downloading, \
                ⚠ download error, ↓ green downloaded, ↑ green uploaded, ☁ cloud only; nothing for \
                a local-only track. A folder line shows its track count and its state, e.g. "↑ 12/18" \
                (uploaded/total). ASCII glyphs (^ ! v V @) where the locale is not UTF-8; colour \
                only on a terminal and without NO_COLOR.
                """)

        @OptionGroup var global: GlobalOptions

        @OptionGroup var view: LibraryViewOptions<Help>

        enum Help: LibraryViewHelp {
            static let json = "Print the groups and tracks as JSON."
            static let remote = "Also list the folder's prefix in the bucket: objects with no local file show as cloud only (☁)."
            static let prefix = "With --remote: the key prefix the folder maps to (default: the one all its known tracks agree on)."
            static let by = "Group by folder, album or artist (default: album when tracks carry tags, else folder)."
            static let folder = "Every file in this folder and its subfolders that push would take, known or not (default: all known tracks)."
        }

        func validate() throws {
            if view.remote && view.folder == nil { throw ValidationError("--remote needs a folder: r2up status DIR --remote") }
            try view.validatePrefix()
        }

        func run() async throws {
            var scanned: ScannedTracks?
            var tracks: [TrackRecord] = []
            var tags: [String: AudioTags] = [:]
            let root = view.root
            do {
                let store = try ReadOnlyStore.open(global)
                // The states for the bucket configured (an upload to another is not one to it), if any.
                let bucket = (try? SettingsResolver().resolve(global.overrides))?.bucket?.value
                // A folder: every file push would take, known or not; else the known tracks.
                if let root {
                    scanned = try TrackScan.tracks(under: root, database: store, bucket: bucket)
                } else {
                    tracks = TrackScan.following(try store?.tracks(under: "/") ?? [], bucket: bucket)
                }
                if view.by != .folder, let store {
                    let stored = try store.tags(under: nil)
                    for track in scanned?.known ?? tracks { if let found = stored[track.path] { tags[track.path] = found } }
                }
            } catch {
                throw CommandFailure(error)
            }
            if let root, let found = scanned { try check(folder: root, scanned: found) }
            if view.remote, let root, let found = scanned {
                tracks = Array(found)
                scanned = nil
                tracks += try await cloudOnly(folder: root, known: tracks)
                tracks.sort { $0.path < $1.path }
            }
            if StatusReport.grouping(view.by, tags: tags) == .folder {
                if let scanned { printByFolder(scanned) } else { printByFolder(tracks) }
                return
            }
            let report = StatusReport(tracks: scanned.map { Array($0) } ?? tracks, tags: tags, by: view.by) { $0.isOnDisk }
            if view.json {
                Terminal.output(report.isEmpty ? "[]" : JSONOutput.encode(report))
                return
            }
            guard !report.isEmpty else {
                if !global.quiet { sayNoTracks() }
                return
            }
            let style = TerminalStyle(environment: ProcessInfo.processInfo.environment, isTerminal: Terminal.stdoutIsTerminal)
            for line in report.lines(style: style) { Terminal.output(line) }
            var totals = StatusTotals()
            for track in scanned.map({ Array($0) }) ?? tracks { totals.add(track) }
            Terminal.output("\n" + totals.line)
        }

        /// A folder argument that names a file, or nothing r2up knows (without --remote), is bad input (exit 2); a
        /// folder deleted whose tracks the store knows shows them (cloud only). Subfolders that
        /// cannot be read are named: their tracks show as last recorded.
        private func check(folder root: String, scanned: ScannedTracks) throws {
            var info = stat()
            let found = stat(root, &info) == 0
            let missing = !found && (errno == ENOENT || errno == ENOTDIR)
            if found, info.st_mode & S_IFMT != S_IFDIR {
                let what = info.st_mode & S_IFMT == S_IFREG ? "is a file, not a folder" : "is not a folder"
                throw CommandFailure(Diagnosis(
                    category: .badInput,
                    message: "\(TextColumns.printable(root)) \(what); status takes a folder (or nothing, for every track)"))
            }
            // With --remote a folder not made yet is fine: its objects are what a pull would bring.
            if !view.remote, missing, scanned.known.isEmpty {
                throw CommandFailure(Diagnosis(category: .badInput, message: "\(TextColumns.printable(root)): no such folder"))
            }
            for problem in scanned.problems where problem.unreadFolder {
                Terminal.error("r2up: \(TextColumns.printable(problem.path)): \(problem.message); its tracks show as last recorded")
            }
        }

        /// The folder groups printed one at a time (100,000 files: no second copy as groups and lines).
        private func printByFolder<Tracks: RandomAccessCollection<TrackRecord>>(_ tracks: Tracks) where Tracks.Index == Int {
            let style = TerminalStyle(environment: ProcessInfo.processInfo.environment, isTerminal: Terminal.stdoutIsTerminal)
            var pending: String?
            var empty = true
            var totals = StatusTotals()
            StatusReport.forEachFolderGroup(tracks, isLocal: { $0.isOnDisk }) { group in
                empty = false
                guard view.json else {
                    // Counted here, not in a pass of its own (each read of a scanned track makes its record).
                    for track in group.tracks { totals.add(track.record) }
                    Terminal.output(StatusReport.lines(of: group, style: style).joined(separator: "\n"))
                    return
                }
                // One JSON array, written a group at a time.
                Terminal.output(pending.map { $0 + "," } ?? "[")
                pending = JSONOutput.encode(group)
            }
            if view.json {
                if let pending { Terminal.output(pending + "\n]") } else { Terminal.output("[]") }
            } else if empty {
                if !global.quiet { sayNoTracks() }
            } else {
                // The last line: how many tracks, by state (issue 29 item 8).
                Terminal.output("\n" + totals.line)
            }
        }

        private func sayNoTracks() {
            Terminal.error(view.folder.map { "No tracks under \(TextColumns.printable($0))." } ?? "No tracks yet.")
        }

        /// The objects under the folder's prefix that have no local file (seed 004: metadata first).
        private func cloudOnly(folder: String, known: [TrackRecord]) async throws -> [TrackRecord] {
            try await view.listing(global) { bucket in
                let prefix = try CloudOnly.prefix(folder: folder, tracks: known, given: view.prefix)
                return try await CloudOnly.tracks(service: try bucket(), folder: folder, prefix: prefix, known: known)
            }
        }
    }
}
