import ArgumentParser
import Foundation
import R2UpKit

@main
struct R2Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "r2up",
        abstract: "Upload tracks to Cloudflare R2 or any S3-compatible storage, and keep their history.",
        version: "0.1.0",
        subcommands: [
            Push.self, Pull.self, Cat.self, Sync.self, Queue.self, Retry.self, History.self, CopyURL.self, Status.self, Ls.self,
            Presign.self, Rm.self, Config.self, Doctor.self, Catalog.self, Watch.self, Offload.self, Fetch.self, Du.self, Serve.self,
        ]
    )

    static func main() async {
        // Before the threads allocate and before OpenSSL is initialised: two malloc arenas (a
        // 2,000-file push peaks 2-3 MiB lower, a daemon stays near what it uses), and no
        // libcrypto cleanup at exit under a thread still signing (ProcessStart).
        ProcessStart.prepare()
        // Library messages name what they point to by the CLI's flags and variables, and
        // what the user can do by its commands.
        OptionWords.install(.cli)
        RemedyWords.install(.cli)
        // A dead peer or a closed pipe (`r2up history | head`) must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        if let suggestion = CommandSuggestion.message(for: Array(CommandLine.arguments.dropFirst())) {
            Terminal.error("r2up: \(suggestion)")
            Foundation.exit(FailureCategory.badInput.exitCode)
        }
        if let dashed = DashedName.message(for: Array(CommandLine.arguments.dropFirst())) {
            Terminal.error("r2up: \(TextColumns.printable(dashed))")
            Foundation.exit(FailureCategory.badInput.exitCode)
        }
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
            if !failure.diagnosis.message.isEmpty { Terminal.error("r2up: \(TextColumns.printable(failure.diagnosis.message))") }
            // An interrupted run exits 128 + its signal: 130 for Ctrl-C, 143 for SIGTERM.
            Foundation.exit(failure.diagnosis.category == .interrupted ? Interruption.exitCode : failure.diagnosis.category.exitCode)
        } catch {
            // Usage errors get exit 2, like DESIGN §3 says; argument-parser's own codes otherwise.
            let code = exitCode(for: error)
            if code == .validationFailure || code.rawValue == 64 {
                Terminal.error(UsageLine.text(message(for: error), arguments: Array(CommandLine.arguments.dropFirst())))
                Foundation.exit(FailureCategory.badInput.exitCode)
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
    init(category: FailureCategory) { diagnosis = Diagnosis(category: category, message: "") }
}

/// An argument error in the `r2up:` style of every other error: one line, then where help is.
enum UsageLine {
    static func text(_ message: String, arguments: [String]) -> String {
        let lines = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var first = lines.first ?? "invalid arguments"
        if first.hasPrefix("Error: ") { first.removeFirst("Error: ".count) }
        // The command words typed (`config init`, `queue cancel`), for the help to look at.
        var words: [String] = []
        var commands: [any ParsableCommand.Type] = R2Up.configuration.subcommands
        for argument in arguments {
            guard let command = commands.first(where: { $0._commandName == argument }) else { break }
            words.append(argument)
            commands = command.configuration.subcommands
        }
        return "r2up: \(first) (see r2up \((words + ["--help"]).joined(separator: " ")))"
    }
}

/// A mistyped subcommand: "unknown command 'psuh'; did you mean 'push'?" (exit 2).
enum CommandSuggestion {
    static var names: [String] {
        R2Up.configuration.subcommands.map { $0._commandName } + ["help"]
    }

    /// The message when `arguments` starts with a word that is not a command; nil otherwise.
    static func message(for arguments: [String], names: [String] = names) -> String? {
        // `r2up help WORD` printed the overview and exited 0 for a WORD that is no command.
        if arguments.first == "help", arguments.count > 1 { return message(for: Array(arguments.dropFirst()), names: names) }
        guard let word = arguments.first, !word.hasPrefix("-"), !names.contains(word) else { return nil }
        let nearest = names.map { (name: $0, distance: distance(word.lowercased(), $0)) }.min { $0.distance < $1.distance }
        let shown = TextColumns.printable(word)
        if let nearest, nearest.distance <= max(2, nearest.name.count / 3) {
            return "unknown command '\(shown)'; did you mean '\(nearest.name)'? (r2up --help lists them)"
        }
        return "unknown command '\(shown)' (r2up --help lists the commands)"
    }

    /// Levenshtein distance, on characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
