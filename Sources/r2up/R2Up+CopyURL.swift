import ArgumentParser
import Foundation
import R2UpKit
import R2UpModel
import R2UpStore

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

        @Argument(help: "An upload's id, key or file name (default: the last upload).")
        var upload: String?

        func run() async throws {
            let item: UploadItem
            do {
                let store = try ReadOnlyStore.open(global)
                if let upload, !upload.isEmpty {
                    guard let found = try store?.upload(matching: upload) else {
                        if (try store?.uploadCount() ?? 0) == 0 { throw Self.noUploads }
                        let shown = TextColumns.printable(upload)
                        throw CommandFailure(
                            Diagnosis(status: .badInput, message: "no upload matches '\(shown)'; see r2up history"))
                    }
                    item = found
                } else {
                    guard let last = try store?.recentUploads(limit: 1).first else { throw Self.noUploads }
                    item = last
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw CommandFailure(error)
            }
            let url = item.publicURL.absoluteString
            Terminal.output(url)

            let outcome = Clipboard().copy(url, terminal: Terminal.stdoutIsTerminal ? Self.writeToTerminal : nil)
            if case .notCopied(let reason) = outcome, !global.quiet {
                Terminal.error("r2up: \(reason); the URL is printed above")
            }
        }

        /// Writes OSC 52 to stdout, which is the terminal.
        @Sendable static func writeToTerminal(_ text: String) {
            Terminal.write(text, to: STDOUT_FILENO)
        }

        static let noUploads = CommandFailure(Diagnosis(status: .badInput, message: "no uploads yet"))
    }
}
