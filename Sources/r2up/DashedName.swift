/// A file name that starts with '-' given as an argument: argument-parser reads `-dash.wav` as
/// the short flags -d -a -s -h …, so it printed the help and exited 0 with nothing uploaded (or
/// said a file was missing). Refused instead with one line saying how to name such a file.
enum DashedName {
    /// The letters of r2up's short flags: a word of only these is a group of flags (`-hv`).
    static let shortFlags: Set<Character> = ["h", "v", "r"]

    /// Commands whose first words are keys or ids, not paths: `./-x` names another key there.
    static let keyCommands: Set<String> = ["pull", "cat", "rm", "presign", "ls", "copy-url", "history"]

    /// The line for the first such word before `--` in `arguments` (the subcommand's words); nil when none.
    static func message(for arguments: [String]) -> String? {
        for word in arguments {
            if word == "--" { return nil }
            guard word.hasPrefix("-"), !word.hasPrefix("--"), word.count > 2 else { continue }
            let letters = word.dropFirst()
            // A negative number, size or duration (`-1`, `-1.5`, `-30s`: the options that take one
            // accept a leading dash). `-04 intro.m4a` is a file name; so is a word after a flag
            // (`--dry-run -x.m4a`); an option's value never starts with '-' (argument-parser).
            if isNumber(letters) { continue }
            if letters.allSatisfy({ shortFlags.contains($0) }) { continue }
            let command = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "COMMAND"
            // The advice is pasted into a shell: a name with spaces or quotes is quoted there.
            let quoted = shellWord(word)
            guard !keyCommands.contains(command) else {
                return "'\(word)' is not an option; name a key or file that starts with '-' after -- (r2up \(command) -- \(quoted))"
            }
            return "'\(word)' is not an option; name a file that starts with '-' after -- (r2up \(command) -- \(quoted)) or as \(shellWord("./" + word))"
        }
        return nil
    }

    /// `word` as a POSIX shell reads it back: as it is when it holds only plain characters, else
    /// in single quotes (a quote inside as '\'').
    static func shellWord(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./+=:,@%".unicodeScalars.contains(scalar))
        }
        return plain ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Digits, an optional fraction, and at most a short unit after them (`1d`, `250ms`, `8MiB`).
    static func isNumber(_ text: Substring) -> Bool {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return false }
        var rest = text.dropFirst(digits.count)
        if rest.first == "." {
            let fraction = rest.dropFirst().prefix { $0.isASCII && $0.isNumber }
            guard !fraction.isEmpty else { return false }
            rest = rest.dropFirst(1 + fraction.count)
        }
        return rest.count <= 3 && rest.allSatisfy { $0.isASCII && $0.isLetter }
    }
}
