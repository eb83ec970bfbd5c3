import Foundation
import R2UpKit

extension DoctorCheck {
    /// `✓ endpoint: http://127.0.0.1:8333 answered (HTTP 403)`, `✗ bucket: … — check …`;
    /// `ok`, `FAIL`, `WARN` and `skip` in place of the glyphs on an ASCII terminal.
    func line(style: TerminalStyle) -> String {
        let mark: String
        let colour: IconColour
        switch outcome {
        case .pass: (mark, colour) = (style.ascii ? "ok" : "✓", .green)
        case .warning: (mark, colour) = (style.ascii ? "WARN" : "!", .orange)
        case .fail: (mark, colour) = (style.ascii ? "FAIL" : "✗", .red)
        case .skipped: (mark, colour) = (style.ascii ? "skip" : "-", .secondary)
        }
        var text = "\(style.paint(mark, colour)) \(kind.rawValue): \(TextColumns.printable(detail))"
        if let advice, outcome == .fail || outcome == .warning {
            text += (style.ascii ? " -- " : " — ") + TextColumns.printable(advice)
        }
        return style.ascii ? Self.asciiOnly(text) : text
    }

    /// Replaces the few non-ASCII characters doctor's own texts use.
    static func asciiOnly(_ text: String) -> String {
        text.replacingOccurrences(of: "…", with: "...").replacingOccurrences(of: "—", with: "--")
    }
}
