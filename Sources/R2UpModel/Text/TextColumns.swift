/// Plain-text tables for people: columns aligned by how wide text looks in a terminal.
public enum TextColumns {
    /// How a column lines its cells up.
    public enum Alignment: Sendable {
        case left, right
    }

    /// The columns a string takes in a terminal: 2 for East Asian wide and fullwidth
    /// characters and most emoji, 0 for combining marks, joiners and variation selectors,
    /// 1 otherwise. Control characters count 0 (run `printable` first).
    /// Counted per character (grapheme cluster): an emoji sequence (ZWJ family, flag, keycap,
    /// a text symbol made emoji by U+FE0F) is one wide glyph, as terminals draw it.
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.count == 1 { return width(of: first) }
        if (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }  // a flag: two regional indicators
        if first.properties.isEmoji,
            scalars.contains(where: {
                $0.value == 0xFE0F || $0.value == 0x200D || $0.value == 0x20E3 || (0x1F3FB...0x1F3FF).contains($0.value)
            })
        {
            return 2
        }
        return scalars.reduce(0) { $0 + width(of: $1) }  // a base and its combining marks
    }

    /// Lays `rows` out as lines, cells padded to their column's widest cell and
    /// separated by two spaces. The last column is never padded (no trailing blanks).
    public static func lines(_ rows: [[String]], alignments: [Alignment] = []) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = Array(repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], displayWidth(cell)) }
        }
        return rows.map { row in
            var line = ""
            for (index, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[index] - displayWidth(cell))
                let isLast = index == row.count - 1
                let alignment = index < alignments.count ? alignments[index] : .left
                if index > 0 { line += "  " }
                switch alignment {
                case .left: line += isLast ? cell : cell + pad
                case .right: line += pad + cell
                }
            }
            return line
        }
    }

    /// `text` with control characters (C0, DEL, C1: newlines, escapes) replaced by "?",
    /// so a file name or key cannot break a line or drive the terminal.
    public static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { scalars.append(isControl(scalar) ? "?" : scalar) }
        return String(scalars)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if isControl(scalar) { return 0 }
        if value < 0x300 { return 1 }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) { return 0 }
        if (0x1160...0x11FF).contains(value) { return 0 }  // Hangul medial vowels and final consonants
        if isWide(value) || (properties.isEmojiPresentation && value >= 0x1F000) { return 2 }
        return 1
    }

    /// East Asian Width W and F ranges (Unicode 15), condensed; emoji above U+1F000 are
    /// wide exactly when they have Emoji_Presentation, which `width(of:)` checks.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3,
            0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB,
            0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA,
            0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757,
            0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55,
            0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
            0x1F200...0x1F251, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
