/// A file name that starts with '-' given as an argument: argument-parser reads `-dash.wav` as
/// the short flags -d -a -s -h …, so it printed the help and exited 0 with nothing uploaded (or
/// said a file was missing). Refused instead with one line saying how to name such a file.
enum DashedName {
    /// The letters of r2up's short flags: a word of only these is a group of flags (`-hv`).
    static let shortFlags: Set<Character> = ["h", "v", "r"]

    /// The line for the first such word before `--` in `arguments` (the subcommand's words); nil when none.
    static func message(for arguments: [String]) -> String? {
        var previous = ""
        for word in arguments {
            if word == "--" { return nil }
            defer { previous = word }
            guard word.hasPrefix("-"), !word.hasPrefix("--"), word.count > 2 else { continue }
            let letters = word.dropFirst()
            // A negative number or duration (`-1d`), or a value after an option (`--key -x`).
            if letters.first?.isNumber == true || (previous.hasPrefix("--") && !previous.contains("=")) { continue }
            if letters.allSatisfy({ shortFlags.contains($0) }) { continue }
            let command = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "COMMAND"
            return "'\(word)' is not an option; name a file that starts with '-' after -- (r2up \(command) -- \(word)) or as ./\(word)"
        }
        return nil
    }
}
