import Foundation

/// `--key-template`: object keys made from tags (DESIGN §12), a pure value.
///
/// Syntax: literal text and fields in braces, `{album}`, or `{track:02}` (a number padded with
/// zeros to that width). Fields and their fallbacks when a tag is missing (beets' rules):
///
/// | field | value | missing |
/// | --- | --- | --- |
/// | `title` | title | the file name without its extension |
/// | `artist` | artist | album artist, then "Unknown Artist" |
/// | `albumartist` | album artist | artist, then "Unknown Artist" |
/// | `album` | album | "Unknown Album" |
/// | `year` | year | 0 (so `0000` with `{year:04}`, "0" without) |
/// | `track` | track number | 0 |
/// | `disc` | disc number | 1 |
/// | `ext` | the file's extension, lower case | "" |
/// | `stem` | the file name without its extension | — |
/// | `folder` | the file's folder, relative to what was given | "" (and the `/` after it goes too) |
///
/// A value's `/`, control characters and `\ : * ? " < > |` become `_`; each segment of the key is
/// trimmed of spaces, is never empty, `.` or `..` (those become `_`), and the key is NFC. A key
/// with nothing in it (`{folder}` of a file at the top) is "": the file is refused.
public struct KeyTemplate: Sendable, Equatable {
    public enum Field: String, Sendable, CaseIterable {
        case title, artist, albumartist, album, year, track, disc, ext, stem, folder

        var isNumber: Bool { self == .year || self == .track || self == .disc }
    }

    enum Piece: Sendable, Equatable {
        case text(String)
        case field(Field, width: Int)
    }

    let pieces: [Piece]
    /// The template as given.
    public let source: String

    /// Parses a template; the error is the one line to show.
    public init(_ source: String) throws(KeyTemplateError) {
        self.source = source
        var pieces: [Piece] = []
        var text = ""
        var rest = Substring(source)
        while let character = rest.first {
            if character == "}" { throw .syntax(source, "a '}' with no '{' before it") }
            if character != "{" {
                text.append(character)
                rest = rest.dropFirst()
                continue
            }
            guard let close = rest.firstIndex(of: "}") else { throw .syntax(source, "a '{' is never closed") }
            let inside = rest[rest.index(after: rest.startIndex)..<close]
            if inside.contains("{") { throw .syntax(source, "a '{' inside a field") }
            let parts = inside.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].lowercased()
            guard let field = Field(rawValue: name) else { throw .unknownField(source, String(parts[0])) }
            var width = 0
            if parts.count == 2 {
                let spec = parts[1]
                guard field.isNumber, (1...2).contains(spec.count), spec.allSatisfy({ $0.isASCII && $0.isNumber }),
                    let parsed = Int(spec), parsed <= 9
                else {
                    throw .syntax(source, "'{\(inside)}': only year, track and disc take a width, like {track:02}")
                }
                width = parsed
            }
            if !text.isEmpty { pieces.append(.text(text)) }
            text = ""
            pieces.append(.field(field, width: width))
            rest = rest[rest.index(after: close)...]
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        guard pieces.contains(where: { if case .field = $0 { true } else { false } }) else {
            throw .syntax(source, "it names no field, so every file would get the same key")
        }
        if source.hasPrefix("/") { throw .syntax(source, "a key does not start with '/'") }
        self.pieces = pieces
    }

    /// The key for a file (before any prefix).
    /// - Parameters:
    ///   - tags: its tags, nil when it has none.
    ///   - relativePath: its path relative to what was given (push: its name; sync: under the folder).
    public func key(tags: AudioTags?, relativePath: String) -> String {
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
        let folder = relativePath.split(separator: "/").dropLast().joined(separator: "/")
        var key = ""
        for piece in pieces {
            switch piece {
            case .text(let text):
                key += text
            case .field(let field, let width):
                switch field {
                case .title: key += Self.safe(tags?.title ?? stem)
                case .artist: key += Self.safe(tags?.artist ?? tags?.albumArtist ?? "Unknown Artist")
                case .albumartist: key += Self.safe(tags?.albumArtist ?? tags?.artist ?? "Unknown Artist")
                case .album: key += Self.safe(tags?.album ?? "Unknown Album")
                case .year: key += Self.padded(tags?.year ?? 0, width)
                case .track: key += Self.padded(tags?.track ?? 0, width)
                case .disc: key += Self.padded(tags?.disc ?? 1, width)
                case .ext: key += Self.safe(ext)
                case .stem: key += Self.safe(stem)
                case .folder: key += folder.split(separator: "/").map { Self.safe(String($0)) }.joined(separator: "/")
                }
            }
        }
        // Nothing but slashes and spaces: no key at all ("" — push and sync refuse the file).
        guard key.contains(where: { $0 != "/" && !$0.isWhitespace }) else { return "" }
        // Segments: a missing folder leaves an empty one, which goes; others are made safe.
        let segments = key.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var kept: [String] = []
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty && index < segments.count - 1 { continue }
            kept.append(segment.isEmpty || segment == "." || segment == ".." ? "_" : segment)
        }
        return ObjectKey.nfc(kept.joined(separator: "/"))
    }

    package static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// A tag value made safe inside one key segment.
    static func safe(_ value: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            let unsafe = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || "/\\:*?\"<>|".unicodeScalars.contains(scalar)
            scalars.append(unsafe ? "_" : scalar)
        }
        return String(scalars)
    }
}

/// A template that cannot be used (exit 2, before anything is sent).
public enum KeyTemplateError: Error, Equatable, CustomStringConvertible {
    case unknownField(String, String)
    case syntax(String, String)

    public var description: String {
        switch self {
        case .unknownField(let template, let field):
            "\(OptionName.keyTemplate.option) '\(template)': unknown field '{\(field)}'; fields are "
                + KeyTemplate.Field.allCases.map { "{\($0.rawValue)}" }.joined(separator: " ")
        case .syntax(let template, let problem):
            "\(OptionName.keyTemplate.option) '\(template)': \(problem)"
        }
    }
}
