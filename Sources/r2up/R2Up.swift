import ArgumentParser
import Foundation
import Uploader

@main
struct R2Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "r2up",
        abstract: "Upload tracks to Cloudflare R2 or any S3-compatible storage, and keep their history.",
        version: "0.1.0",
        subcommands: [
            Push.self, Pull.self, Sync.self, Queue.self, Retry.self, History.self, CopyURL.self, Status.self, Ls.self,
            Presign.self, Config.self, Doctor.self,
        ]
    )

    static func main() async {
        // A dead peer or a closed pipe (`r2up history | head`) must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            if Terminal.isOutputClosed { Foundation.exit(Terminal.closedOutputStatus) }
        } catch let failure as CommandFailure {
            // The reader went away: whatever went wrong after that, the run ended because of it.
            if Terminal.isOutputClosed { Foundation.exit(Terminal.closedOutputStatus) }
            if !failure.diagnosis.message.isEmpty { Terminal.error("r2up: \(failure.diagnosis.message)") }
            Foundation.exit(failure.diagnosis.status.rawValue)
        } catch {
            // Usage errors get exit 2, like DESIGN §3 says; argument-parser's own codes otherwise.
            let code = exitCode(for: error)
            if code == .validationFailure || code.rawValue == 64 {
                Terminal.error(fullMessage(for: error))
                Foundation.exit(ExitStatus.badInput.rawValue)
            }
            exit(withError: error)
        }
    }
}

/// An error already explained for the user, carrying its exit code.
struct CommandFailure: Error {
    var diagnosis: Diagnosis

    init(_ diagnosis: Diagnosis) { self.diagnosis = diagnosis }
    init(_ error: any Error) { diagnosis = Diagnosis(error) }
    init(status: ExitStatus) { diagnosis = Diagnosis(status: status, message: "") }
}
