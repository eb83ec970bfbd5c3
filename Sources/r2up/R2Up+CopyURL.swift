import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct CopyURL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "copy-url",
            abstract: "Print an upload's public URL and put it on the clipboard.",
            discussion: """
                Without an argument, the last upload. Copies with wl-copy, xclip, xsel or pbcopy \
                (the first on PATH); without one, on a terminal, asks the terminal (OSC 52).
                """)

        @OptionGroup var global: GlobalOptions

        @Argument(help: "An upload's id (or its first characters), key or file name (default: the last upload).")
        var upload: String?

        func run() async throws {
            let item: UploadItem
            var warning: String?
            do {
                let store = try ReadOnlyStore.open(global)
                if let upload, !upload.isEmpty {
                    if let found = try store?.upload(matching: upload) {
                        item = found
                    } else {
                        // An id's first characters, as history prints them.
                        let matches = try store?.uploads(idPrefix: upload) ?? []
                        let shown = TextColumns.printable(upload)
                        if matches.count > 1 {
                            throw CommandFailure(
                                Diagnosis(category: .badInput, message: "the id '\(shown)' matches more than one upload; give more of it"))
                        }
                        guard let found = matches.first else {
                            if (try store?.uploadCount() ?? 0) == 0 { throw Self.noUploads }
                            throw CommandFailure(
                                Diagnosis(category: .badInput, message: "no upload matches '\(shown)'; see r2up history"))
                        }
                        item = found
                    }
                } else {
                    guard let last = try store?.recentUploads(limit: 1).first else { throw Self.noUploads }
                    item = last
                }
                if let store, let deleted = try store.deletionDates(of: [item])[item.id] {
                    var line = "warning: \(TextColumns.printable(item.r2Key)) was deleted on \(Self.dayFormat(deleted)) (by r2up rm, sync --delete or --delete-moved); this URL no longer serves"
                    if let live = try store.liveUpload(sameAs: item) {
                        line += "; the same file is live at \(live.publicURL.absoluteString) (id \(live.id.uuidString.prefix(8).lowercased()))"
                    }
                    warning = line
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw CommandFailure(error)
            }
            let url = item.publicURL.absoluteString
            Terminal.output(url)
            if let warning, !global.quiet { Terminal.error(warning) }

            let outcome = Clipboard().copy(url, terminal: Terminal.stdoutIsTerminal ? Self.writeToTerminal : nil)
            if case .notCopied(let reason) = outcome, !global.quiet {
                Terminal.error("r2up: \(reason); the URL is printed above")
            }
        }

        /// Writes OSC 52 to stdout, which is the terminal.
        @Sendable static func writeToTerminal(_ text: String) {
            Terminal.write(text, to: STDOUT_FILENO)
        }

        /// A date with its zone, as the rest of r2up prints times.
        static func dayFormat(_ date: Date) -> String {
            ZonedTime.text(date)
        }

        static let noUploads = CommandFailure(Diagnosis(category: .badInput, message: "no uploads yet"))
    }
}
