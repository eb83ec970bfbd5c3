import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Config: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a profile into r2up's config file, or show the settings in effect.",
            subcommands: [ConfigInit.self, ConfigShow.self])
    }

    struct ConfigInit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Ask for endpoint, keys and bucket, and write them as a profile of r2up's config.",
            discussion: """
                Questions go to stderr, answers come from stdin, one per line (so they can be piped). \
                Each answer is checked as it is typed; a wrong one is explained and asked again. \
                A blank answer keeps the profile's current value. The endpoint may be a URL or an R2 \
                account id (32 hex digits). The file is $XDG_CONFIG_HOME/r2up/config (default \
                ~/.config/r2up/config), written atomically with mode 0600; other profiles in it are kept.
                """)

        @Option(help: "The profile to write.")
        var profile = "default"

        func validate() throws {
            if profile.isEmpty || profile.contains("]") || profile.contains("\n") {
                throw ValidationError("--profile '\(profile)' is not a profile name")
            }
        }

        func run() throws {
            let path = SettingsResolver().r2upConfigPath
            let current: [String: String]
            do {
                current = try ProfileWriter.currentValues(profile: profile, at: path)
            } catch {
                throw CommandFailure(Diagnosis(category: .configuration, message: "\(error); nothing was written"))
            }
            guard let answers = ask(current: current) else {
                throw CommandFailure(
                    Diagnosis(
                        category: .badInput,
                        message: "config init needs answers on standard input (endpoint, keys, bucket); nothing was written"))
            }
            do {
                try ProfileWriter.save(answers, profile: profile, at: path)
            } catch {
                throw CommandFailure(Diagnosis(category: error.category, message: "\(error); nothing was written"))
            }
            Terminal.output("Wrote profile '\(profile)' to \(path) (mode 0600).")
            Terminal.output("Check it with: r2up doctor" + (profile == "default" ? "" : " --profile \(profile)"))
        }

        /// Asks each question, again until the answer will do; nil when stdin ends before the
        /// required ones are answered.
        private func ask(current: [String: String]) -> ProfileAnswers? {
            let prompter = Prompter()
            var answers = ProfileAnswers()
            /// One question, asked until its answer passes `ProfileWriter.problem` (or input ends).
            func answer(
                _ question: String, current: String?, secret: Bool = false, field: PartialKeyPath<ProfileAnswers>,
                required: Bool
            ) -> String? {
                while let text = prompter.ask(question, current: current, secret: secret) {
                    if let problem = ProfileWriter.problem(with: text, for: field) {
                        Terminal.error("r2up: \(TextColumns.printable(problem.description)); try again")
                    } else if required && current == nil && text.trimmingCharacters(in: .whitespaces).isEmpty {
                        Terminal.error("r2up: an answer is needed (the profile has none); try again")
                    } else {
                        return text
                    }
                }
                return nil
            }
            let endpoint = current["endpoint_url"]
                ?? current["r2_account_id"].map { EndpointRule.r2URL(account: $0) }
            guard let endpointAnswer = answer("Endpoint URL or R2 account id", current: endpoint, field: \.endpoint, required: true)
            else { return nil }
            answers.endpoint = endpointAnswer
            guard
                let key = answer(
                    "Access key id", current: current["aws_access_key_id"].map { SettingsReport.mask($0) }, field: \.accessKeyID,
                    required: true)
            else { return nil }
            answers.accessKeyID = key
            guard
                let secret = answer(
                    "Secret access key", current: current["aws_secret_access_key"].map { _ in "keep the current one" },
                    secret: true, field: \.secretAccessKey, required: true)
            else { return nil }
            answers.secretAccessKey = secret
            guard let bucket = answer("Bucket", current: current["bucket"], field: \.bucket, required: true) else { return nil }
            answers.bucket = bucket
            // Optional from here: the end of input leaves the rest as they are.
            answers.publicURL = answer(
                "Public URL base (optional, - for none)", current: current["public_url"], field: \.publicURL, required: false)
            let newEndpoint = (try? ProfileWriter.endpointURL(endpointAnswer)) ?? endpoint
            let isR2 = newEndpoint.map(EndpointRule.isR2) ?? false
            answers.region = answer(
                "Region (optional)", current: current["region"] ?? (isR2 ? "auto" : "us-east-1"), field: \.region, required: false)
            return answers
        }
    }

    struct ConfigShow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show each setting in effect and where it came from (secrets are never shown).",
            discussion: """
                Flags override environment variables, which override r2up's config, then \
                ~/.aws/credentials and ~/.aws/config. The secret access key and session token \
                show only as "set (N characters)"; the access key id as its first and last 4 characters.
                """)

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the settings as JSON (settings: id, label, value, source; files: path, read).")
        var json = false

        func run() throws {
            let settings: Settings
            do { settings = try global.settings() } catch { throw CommandFailure(error) }
            let environment = ProcessInfo.processInfo.environment
            let report = SettingsReport(
                settings: settings, resolver: SettingsResolver(),
                ascii: !TerminalStyle.localeIsUTF8(environment))
            if json {
                Terminal.output(JSONOutput.encode(report))
            } else {
                for line in report.lines { Terminal.output(line) }
            }
        }
    }
}

/// Questions on stderr, answers from stdin; a secret is read with echo off on a terminal.
private struct Prompter {
    let interactive = isatty(STDIN_FILENO) != 0

    /// The answer (blank for "keep"), or nil at the end of input.
    func ask(_ question: String, current: String?, secret: Bool = false) -> String? {
        let prompt = question + (current.map { " [\($0)]" } ?? "") + ": "
        if interactive {
            Terminal.write(prompt, to: STDERR_FILENO)
        } else {
            // Piped: each question on a line of its own, as a log would want it.
            Terminal.error(prompt.trimmingCharacters(in: .whitespaces))
        }
        guard secret && interactive else { return readLine(strippingNewline: true) }
        return EchoOff.withEchoOff { readLine(strippingNewline: true) }
    }
}

/// Turns terminal echo off for a secret and back on afterwards, also when Ctrl-C ends the program.
private enum EchoOff {
    /// The settings to restore from the SIGINT handler, which can capture nothing.
    nonisolated(unsafe) static var saved = termios()

    static func withEchoOff(_ body: () -> String?) -> String? {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return body() }
        saved = original
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        let previous = signal(SIGINT) { _ in
            tcsetattr(STDIN_FILENO, TCSANOW, &EchoOff.saved)
            _exit(130)
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            signal(SIGINT, previous)
        }
        return body()
    }
}
