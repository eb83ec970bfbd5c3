public import R2UpModel

// How a track's or a group's state is drawn: glyphs, ASCII fallbacks, colours. The model says
// which state (TrackIcon, GroupSummary.Kind); the CLI and `r2up serve` draw it with these.

/// The colour an icon is drawn in; a terminal maps these names to its own palette.
public enum IconColour: String, Codable, Sendable, CaseIterable {
    case orange, red, accent, green, secondary
}

extension TrackIcon {
    /// The glyph on a UTF-8 terminal, nil for a local-only track (it shows nothing).
    ///
    /// Hollow icons get their own arrow so they still differ where colour is off (`NO_COLOR`).
    public var glyph: String? {
        switch self {
        case .uploading, .uploaded: "↑"
        case .uploadError, .downloadError: "⚠"
        case .downloading: "⇣"
        case .downloaded: "↓"
        case .cloudOnly: "☁"
        case .localOnly: nil
        }
    }

    /// The glyph where the terminal is not UTF-8.
    public var asciiGlyph: String? {
        switch self {
        case .uploading: "*"  // not uploaded's "^": without colour the two must differ
        case .uploaded: "^"
        case .uploadError, .downloadError: "!"
        case .downloading: "v"
        case .downloaded: "V"
        case .cloudOnly: "@"
        case .localOnly: nil
        }
    }

    /// The seed draws downloading as an outline; everything else is filled.
    public var isHollow: Bool { self == .downloading }

    /// The colour, nil where the icon has none.
    public var colour: IconColour? {
        switch self {
        case .uploading: .orange
        case .uploadError, .downloadError: .red
        case .downloading, .cloudOnly: .accent
        case .downloaded, .uploaded: .green
        case .localOnly: nil
        }
    }

    /// The glyph for a terminal that is (`ascii: false`) or is not UTF-8.
    public func glyph(ascii: Bool) -> String? {
        ascii ? asciiGlyph : glyph
    }

    /// The same, where colour may be off (`NO_COLOR`, not a terminal): uploading, orange "↑"
    /// in colour, is then the hollow "⇡", so it never looks like uploaded's "↑".
    public func glyph(ascii: Bool, colour: Bool) -> String? {
        if self == .uploading && !ascii && !colour { return "⇡" }
        return glyph(ascii: ascii)
    }
}

extension GroupSummary {
    /// The glyph on a UTF-8 terminal.
    public var glyph: String? { glyph(ascii: false) }

    /// The glyph for a UTF-8 (`ascii: false`) or plain terminal.
    public func glyph(ascii: Bool) -> String? {
        switch kind {
        case .uploading: ascii ? "*" : "↑"  // ASCII: not "^", which means uploaded
        case .allUploaded: ascii ? "^" : "↑"
        case .partial: ascii ? "^" : "⇡"
        case .error: ascii ? "!" : "⚠"
        case nil: nil
        }
    }

    /// The seed draws a partly uploaded group with a hollow arrow.
    public var isHollow: Bool { kind == .partial }

    /// orange, red, green, or secondary for a partial group.
    public var colour: IconColour? {
        switch kind {
        case .uploading: .orange
        case .error: .red
        case .allUploaded: .green
        case .partial: .secondary
        case nil: nil
        }
    }

    /// Glyph and count as one string, e.g. "↑ 12/18"; empty when nothing is shown.
    public func label(ascii: Bool = false) -> String {
        [glyph(ascii: ascii), count].compactMap { $0 }.joined(separator: " ")
    }

    /// The label on a UTF-8 terminal.
    public var label: String { label(ascii: false) }
}
