import Foundation
import R2UpModel

/// The INI dialect of `~/.aws/config`, `~/.aws/credentials` and r2up's own config:
/// `[section]` headers, `key = value` lines, `#` and `;` comments.
struct INIFile: Sendable, Equatable {
    var sections: [String: [String: String]] = [:]

    /// Parses text; a line that is neither a header, a setting nor a comment is an error naming its line.
    init(text: String, path: String) throws(ConfigurationError) {
        var current: String?
        // "\r\n" is one Character in Swift, so splitting on "\n" alone kept a CRLF file (Windows,
        // some editors) as one line (found by scripts/fuzz.sh ini).
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw .invalidFile(path: path, line: index + 1, reason: "a section header must look like [name]")
                }
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw .invalidFile(path: path, line: index + 1, reason: "expected 'key = value'")
            }
            guard let section = current else {
                throw .invalidFile(path: path, line: index + 1, reason: "a setting before any [section]")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // Indented sub-settings (`s3 =` blocks) are skipped: r2up reads only top-level keys.
            if raw.first == " " || raw.first == "\t" { continue }
            sections[section, default: [:]][key] = value
        }
    }

    /// Reads a file; nil when it does not exist.
    static func load(_ path: String) throws(ConfigurationError) -> INIFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidFile(path: path, line: 0, reason: "cannot be read")
        }
        return try INIFile(text: String(decoding: data, as: UTF8.self), path: path)
    }
}
