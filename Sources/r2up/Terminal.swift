import Foundation

/// Writing to the terminal: results on stdout, everything else on stderr.
enum Terminal {
    /// A reader gone (`r2up status | head`) is not an error: the rest is dropped
    /// (FileHandle.write(_:) would trap on EPIPE).
    static func output(_ line: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
    }

    static func error(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }
}

/// JSON for listings: sorted keys, ISO 8601 dates, no escaped slashes (URLs stay readable).
enum JSONOutput {
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }
}
