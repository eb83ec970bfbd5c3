import ArgumentParser
import Foundation
import Uploader

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

        @Flag(help: "Print the groups and tracks as JSON.")
        var json = false

        @Flag(help: "Also list the folder's prefix in the bucket: objects with no local file show as cloud only (☁).")
        var remote = false

        @Option(help: "With --remote: the key prefix the folder maps to (default: read off its uploaded tracks).")
        var prefix: String?

        @Option(help: "Group by folder, album or artist (default: album when tracks carry tags, else folder).")
        var by: StatusGrouping?

        @Argument(help: "Only the tracks in this folder and its subfolders (default: all).")
        var folder: String?

        func validate() throws {
            if remote && folder == nil { throw ValidationError("--remote needs a folder: r2up status DIR --remote") }
            if prefix != nil && !remote { throw ValidationError("--prefix goes with --remote") }
        }

        func run() async throws {
            var tracks: [TrackRecord]
            var tags: [String: AudioTags] = [:]
            do {
                let store = try ReadOnlyStore.open(global)
                tracks = try store.map(tracks(in:)) ?? []
                if by != .folder, let store {
                    let stored = try store.storedTags(under: nil)
                    for track in tracks { if let found = stored[track.path]?.tags { tags[track.path] = found } }
                }
            } catch {
                throw CommandFailure(error)
            }
            if remote, let folder {
                tracks += try await cloudOnly(folder: URL(fileURLWithPath: folder).standardizedFileURL.path, known: tracks)
                tracks.sort { $0.path < $1.path }
            }
            let report = StatusReport(tracks: tracks, tags: tags, by: by) { track in
                // A file gone from disk but known in the cloud shows as cloud only.
                !track.isInCloud || FileManager.default.fileExists(atPath: track.path)
            }
            if json {
                Terminal.output(report.isEmpty ? "[]" : JSONOutput.encode(report))
                return
            }
            guard !report.isEmpty else {
                if !global.quiet {
                    Terminal.error(folder.map { "No tracks under \(TextColumns.printable($0))." } ?? "No tracks yet.")
                }
                return
            }
            let style = TerminalStyle(environment: ProcessInfo.processInfo.environment, isTerminal: Terminal.stdoutIsTerminal)
            for line in report.lines(style: style) { Terminal.output(line) }
        }

        /// The objects under the folder's prefix that have no local file (seed 004: metadata first).
        private func cloudOnly(folder: String, known: [TrackRecord]) async throws -> [TrackRecord] {
            guard var prefix = prefix ?? CloudOnly.inferPrefix(folder: folder, tracks: known) else {
                throw CommandFailure(
                    Diagnosis(
                        status: .badInput,
                        message: "no track in \(TextColumns.printable(folder)) says which prefix it maps to; give --prefix"))
            }
            if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
            do {
                let service = try UploadService(settings: try global.settings(), options: RunOptions())
                return try await CloudOnly.tracks(service: service, folder: folder, prefix: prefix, known: known)
            } catch let error as DownloadError {
                throw CommandFailure(error.diagnosis)
            } catch {
                throw CommandFailure(error)
            }
        }

        /// The tracks under `folder` as given, else (a link to it) under its real path; all without one.
        private func tracks(in store: Store) throws -> [TrackRecord] {
            guard let folder else { return try store.tracks(under: "/") }
            let url = URL(fileURLWithPath: folder).standardizedFileURL
            let found = try store.tracks(under: url.path)
            let real = url.resolvingSymlinksInPath().path
            if found.isEmpty && real != url.path { return try store.tracks(under: real) }
            return found
        }
    }
}
