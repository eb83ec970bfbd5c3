import Foundation

/// `--include` / `--exclude` globs (fnmatch(3) syntax: `*`, `?`, `[…]`).
///
/// A pattern with a `/` is matched against the whole path inside the folder, where `*`
/// also crosses `/` ("Live/*" takes everything under Live); one without is matched
/// against the file's name ("*.flac"). A file is taken when it matches an include (or
/// none is given) and no exclude.
public struct SyncFilter: Sendable, Equatable {
    /// Partial downloads and temporary files that must never be published.
    public static let defaultExcludes = ["*.part", "*.partial", "*.tmp", "*.crdownload", "*.download", "*~"]

    public var includes: [String]
    public var excludes: [String]

    public init(includes: [String] = [], excludes: [String] = [], defaultExcludes: Bool = true) {
        self.includes = includes.map(SyncScanner.nfc)
        self.excludes = excludes.map(SyncScanner.nfc) + (defaultExcludes ? Self.defaultExcludes : [])
    }

    /// Whether the file at `relativePath` (NFC, `/` separators) takes part in the sync.
    public func accepts(_ relativePath: String) -> Bool {
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        if !includes.isEmpty && !includes.contains(where: { Self.matches($0, path: relativePath, name: name) }) {
            return false
        }
        return !excludes.contains(where: { Self.matches($0, path: relativePath, name: name) })
    }

    static func matches(_ pattern: String, path: String, name: String) -> Bool {
        fnmatch(pattern, pattern.contains("/") ? path : name, 0) == 0
    }
}

/// `--min-age` and friends: "10s", "500ms", "2m", "1h", "1d", or plain seconds.
public enum SyncDuration {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number = trimmed
        var scale = 1.0
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            number = String(trimmed.dropLast(suffix.count))
            scale = factor
            break
        }
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }
}
