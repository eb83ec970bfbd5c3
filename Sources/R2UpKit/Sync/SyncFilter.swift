import Foundation
import R2UpModel

/// `--include` / `--exclude` globs (fnmatch(3) syntax: `*`, `?`, `[…]`).
///
/// A pattern with a `/` is matched against the whole path inside the folder, where `*`
/// also crosses `/` ("Live/*" takes everything under Live); one without is matched
/// against the file's name ("*.flac"). A file is taken when it matches an include (or
/// none is given) and no exclude.
package struct SyncFilter: Sendable, Equatable {
    /// Partial downloads and temporary files that must never be published.
    package static let defaultExcludes = ["*.part", "*.partial", "*.tmp", "*.crdownload", "*.download", "*~"]

    /// The filter with only `defaultExcludes`: what `push DIR` and `status DIR` skip, as sync and watch do.
    package static let temporaryNames = SyncFilter()

    package var includes: [String]
    package var excludes: [String]
    /// Off with --no-default-excludes, which also takes hidden files.
    package let usesDefaultExcludes: Bool
    private let includeMatchers: [Matcher]
    private let excludeMatchers: [Matcher]

    package init(includes: [String] = [], excludes: [String] = [], defaultExcludes: Bool = true) {
        self.includes = includes.map(ObjectKey.nfc)
        self.excludes = excludes.map(ObjectKey.nfc) + (defaultExcludes ? Self.defaultExcludes : [])
        usesDefaultExcludes = defaultExcludes
        includeMatchers = self.includes.map(Matcher.init)
        excludeMatchers = self.excludes.map(Matcher.init)
    }

    /// Whether the file at `relativePath` (NFC, `/` separators) takes part in the sync.
    package func accepts(_ relativePath: String) -> Bool {
        let name = Self.name(relativePath)
        if !includeMatchers.isEmpty && !includeMatchers.contains(where: { $0.matches(path: relativePath, name: name) }) {
            return false
        }
        return !excludeMatchers.contains(where: { $0.matches(path: relativePath, name: name) })
    }

    /// Whether an exclude takes the folder at `relativePath` whole: its name matches a name
    /// pattern, or a path pattern matches what lies under it ("lost+found/*", "lost+found").
    package func excludesFolder(_ relativePath: String) -> Bool {
        let name = Self.name(relativePath)
        return excludeMatchers.contains { $0.matches(path: relativePath, name: name) || $0.matches(path: relativePath + "/x", name: name) }
    }

    /// What follows the last "/": a slice, not a copy (`status DIR` asks for every file it meets).
    private static func name(_ relativePath: String) -> Substring {
        relativePath.utf8.lastIndex(of: 0x2F).map { relativePath[relativePath.utf8.index(after: $0)...] } ?? relativePath[...]
    }

    package static func == (lhs: SyncFilter, rhs: SyncFilter) -> Bool {
        lhs.includes == rhs.includes && lhs.excludes == rhs.excludes && lhs.usesDefaultExcludes == rhs.usesDefaultExcludes
    }

    /// Why `pattern` is not a glob fnmatch(3) reads as meant, or nil: an unclosed `[` or a
    /// trailing `\` would silently match nothing.
    package static func problem(_ pattern: String) -> String? {
        if pattern.isEmpty { return "the pattern is empty" }
        var bytes = Array(pattern.utf8)[...]
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\\"):
                guard bytes.popFirst() != nil else { return "it ends with a lone '\\'" }
            case UInt8(ascii: "["):
                // A class: '!' or '^' may open it, ']' right after the opening is a member.
                if bytes.first == UInt8(ascii: "!") || bytes.first == UInt8(ascii: "^") { bytes.removeFirst() }
                if bytes.first == UInt8(ascii: "]") { bytes.removeFirst() }
                guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return "'[' has no closing ']'" }
                bytes = bytes[bytes.index(after: close)...]
            default:
                break
            }
        }
        return nil
    }

    /// One glob, with a fast path for "*.ext" (the default excludes run on every file of a no-op sync).
    private struct Matcher: Sendable {
        let pattern: String
        let onPath: Bool
        /// The literal tail of a "*literal" pattern, as bytes.
        let suffix: [UInt8]?

        init(_ pattern: String) {
            self.pattern = pattern
            onPath = pattern.contains("/")
            let tail = pattern.dropFirst()
            let isSuffix = pattern.hasPrefix("*") && !tail.contains(where: { "*?[]\\".contains($0) })
            suffix = isSuffix ? Array(tail.utf8) : nil
        }

        func matches(path: String, name: Substring) -> Bool {
            let subject = onPath ? path[...] : name
            if let suffix {
                return subject.utf8.count >= suffix.count && subject.utf8.suffix(suffix.count).elementsEqual(suffix)
            }
            return fnmatch(pattern, String(subject), 0) == 0
        }
    }
}
