package import R2UpKit
/// The lines of a progress display: one bar per file in flight, then a total with rate and
/// ETA. Pure text, every line at most `width` columns, so a display can move its cursor
/// up by the line count and redraw in place (a line that wrapped would break that).
public struct ProgressBars: Sendable {
    public var width: Int
    public var style: TerminalStyle
    /// Files shown; the rest are counted on one line.
    public var maxFiles: Int

    public init(width: Int, style: TerminalStyle, maxFiles: Int = 8) {
        self.width = max(20, width)
        self.style = style
        self.maxFiles = maxFiles
    }

    /// `rate` is bytes a second over the last few seconds, nil while unknown.
    package func lines(_ snapshot: TransferProgress.Snapshot, rate: Double?) -> [String] {
        var lines: [String] = []
        for file in snapshot.active.prefix(maxFiles) {
            lines.append(fileLine(file))
        }
        if snapshot.active.count > maxFiles {
            lines.append(fit("  … and \(snapshot.active.count - maxFiles) more in flight"))
        }
        lines.append(totalLine(snapshot, rate: rate))
        return lines
    }

    func fileLine(_ file: TransferProgress.File) -> String {
        let figures = "\(Self.percent(file.sent, of: file.size))  \(ByteCount.string(file.sent)) / \(ByteCount.string(file.size))"
        let barWidth = min(24, max(6, width / 5))
        // "  name  bar  figures"
        let nameWidth = width - 2 - 2 - (barWidth + 2) - 2 - TextColumns.displayWidth(figures)
        guard nameWidth >= 6 else { return fit("  " + Self.truncate(TextColumns.printable(file.name), to: width - 2, ascii: style.ascii)) }
        let name = Self.pad(Self.truncate(TextColumns.printable(file.name), to: min(nameWidth, 40), ascii: style.ascii), to: min(nameWidth, 40))
        return "  \(name)  \(bar(file.sent, of: file.size, width: barWidth))  \(figures)"
    }

    func totalLine(_ snapshot: TransferProgress.Snapshot, rate: Double?) -> String {
        let finished = snapshot.filesDone + snapshot.filesFailed
        var files = "\(finished)/\(snapshot.filesTotal) files"
        if snapshot.filesFailed > 0 { files += ", \(snapshot.filesFailed) failed" }
        let figures = "\(Self.percent(snapshot.bytesDone, of: snapshot.bytesTotal))  "
            + "\(ByteCount.string(snapshot.bytesDone)) / \(ByteCount.string(snapshot.bytesTotal))"
        var speed = "ETA --:--"
        if let rate, rate > 0 {
            let left = Double(max(0, snapshot.bytesTotal - snapshot.bytesDone)) / rate
            speed = "\(ByteCount.string(Int64(rate)))/s  ETA \(Self.clock(left))"
        }
        let barWidth = min(24, max(6, width / 5))
        // The bar holds colour codes, so the width is counted on the plain parts.
        let plain = [files, figures, speed].map(TextColumns.displayWidth).reduce(0, +) + 4
        if plain + 2 + barWidth + 2 <= width {
            return "\(files)  \(bar(snapshot.bytesDone, of: snapshot.bytesTotal, width: barWidth))  \(figures)  \(speed)"
        }
        return fit("\(files)  \(figures)  \(speed)")
    }

    /// A bar of `width` columns plus its ends: eighth blocks in Unicode, `#`/`-` in ASCII.
    func bar(_ done: Int64, of total: Int64, width: Int) -> String {
        let fraction = total > 0 ? min(1, max(0, Double(done) / Double(total))) : 1
        if style.ascii {
            let filled = Int((fraction * Double(width)).rounded(.down))
            return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        }
        let eighths = Int((fraction * Double(width * 8)).rounded(.down))
        let full = eighths / 8
        let partial = eighths % 8
        var filled = String(repeating: "█", count: full)
        if partial > 0 { filled += ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][partial] }
        let empty = String(repeating: "░", count: width - full - (partial > 0 ? 1 : 0))
        return "▕" + style.paint(filled, .accent) + style.paint(empty, .secondary) + "▏"
    }

    /// A line cut to the width; only plain lines go through here (no colour codes).
    private func fit(_ line: String) -> String {
        TextColumns.displayWidth(line) <= width ? line : Self.truncate(line, to: width, ascii: style.ascii)
    }

    /// "  7%", " 42%", "100%": the percent, never rounded up to 100 before the end.
    static func percent(_ done: Int64, of total: Int64) -> String {
        let value = total > 0 ? Int(Double(min(done, total)) * 100 / Double(total)) : 100
        let text = "\(value)%"
        return String(repeating: " ", count: max(0, 4 - text.count)) + text
    }

    /// "0:07", "12:34", "1:02:03".
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 360_000 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }

    /// `text` cut to `columns` display columns, ending in an ellipsis when cut.
    static func truncate(_ text: String, to columns: Int, ascii: Bool) -> String {
        guard TextColumns.displayWidth(text) > columns else { return text }
        let ellipsis = ascii ? "..." : "…"
        let room = columns - ellipsis.count
        guard room > 0 else { return String(ellipsis.prefix(max(0, columns))) }
        var out = ""
        var used = 0
        for character in text {
            let characterWidth = TextColumns.displayWidth(String(character))
            if used + characterWidth > room { break }
            out.append(character)
            used += characterWidth
        }
        return out + ellipsis
    }

    static func pad(_ text: String, to columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - TextColumns.displayWidth(text)))
    }
}
