public import Foundation
public import R2UpKit

/// `r2up queue --watch`: seed 003's HUD as lines, redrawn by the CLI every interval. Counts,
/// the uploads in flight with a bar, bytes and rate, what comes next, what failed and why.
///
/// On a terminal (`width` and `height` set) every line is at most `width` columns (a wrapped
/// line would break an in-place redraw) and there are at most `height` lines: long sections
/// give up rows first (their rest counted on a "+N more" line), then the blank lines between
/// sections, then the least urgent sections. Off a terminal (nil) nothing is cut.
public struct QueueHUD: Sendable {
    public var width: Int?
    public var height: Int?
    public var style: TerminalStyle
    public var timeZone: TimeZone
    /// Rows of "up next" (and of "failed", "interrupted") shown at most; the rest are counted.
    public var rowsPerSection: Int

    public init(width: Int?, height: Int?, style: TerminalStyle, timeZone: TimeZone = .current, rowsPerSection: Int = 5) {
        self.width = width.map { max(20, $0) }
        self.height = height.map { max(1, $0) }
        self.style = style
        self.timeZone = timeZone
        self.rowsPerSection = max(1, rowsPerSection)
    }

    /// One section: a header, rows (made for however many fit) and a count of the rest.
    private struct Section {
        /// Lower stays longer when the screen is short.
        var priority: Int
        var header: String?
        var total: Int
        var shown: Int
        var rows: (Int) -> [String]
        /// Rows shown at most, however tall the screen (the first `shown`).
        var cap = 0
    }

    /// The HUD for `report`, refreshed at `time`; `note` (e.g. "the database is busy") follows the time.
    public func lines(_ report: QueueReport, at time: Date, note: String? = nil) -> [String] {
        var title = "Queue at " + format(time, width == nil ? .second : .clock)
        if let note { title += " · " + TextColumns.printable(note) }
        let head = [fit(title), fit(countsLine(report))]
        var sections = makeSections(report)
        for index in sections.indices { sections[index].cap = sections[index].shown }
        var blanks = true
        func count() -> Int {
            head.count + sections.reduce(0) { sum, section in
                sum + (blanks ? 1 : 0) + (section.header == nil ? 0 : 1) + section.shown + (section.shown < section.total ? 1 : 0)
            }
        }
        if let height {
            guard height > head.count else { return Array(head.prefix(height)) }
            while count() > height {
                let shrinkable = sections.indices.filter { sections[$0].shown > 1 }
                if let index = shrinkable.max(by: {
                    (sections[$0].shown, sections[$0].priority) < (sections[$1].shown, sections[$1].priority)
                }) {
                    sections[index].shown -= 1
                } else if blanks {
                    blanks = false
                } else if let index = sections.indices.max(by: { sections[$0].priority < sections[$1].priority }) {
                    sections.remove(at: index)
                }
            }
            // Lines freed by the last step (a blank line each) go back to the most urgent sections.
            var grew = true
            while grew {
                grew = false
                for index in sections.indices.sorted(by: { sections[$0].priority < sections[$1].priority })
                where sections[index].shown < sections[index].cap {
                    sections[index].shown += 1
                    if count() <= height {
                        grew = true
                        break
                    }
                    sections[index].shown -= 1
                }
            }
        }
        var lines = head
        for section in sections {
            if blanks { lines.append("") }
            if let header = section.header { lines.append(fit(header)) }
            lines += section.rows(section.shown)
            if section.shown < section.total { lines.append(fit("  +\(section.total - section.shown) more")) }
        }
        return lines
    }

    /// "2 queued · 1 uploading · 1 verifying · 1 interrupted · 0 failed": verifying and
    /// interrupted only when there are some.
    func countsLine(_ report: QueueReport) -> String {
        let verifying = report.uploading.filter { $0.state == UploadJobState.verifying.rawValue }.count
        var parts = ["\(report.counts.queued) queued", "\(report.counts.uploading - verifying) uploading"]
        if verifying > 0 { parts.append("\(verifying) verifying") }
        if report.counts.interrupted > 0 { parts.append("\(report.counts.interrupted) interrupted") }
        parts.append("\(report.counts.failed) failed")
        return parts.joined(separator: " · ")
    }

    private func makeSections(_ report: QueueReport) -> [Section] {
        var sections: [Section] = []
        if !report.uploading.isEmpty {
            var header = "Uploading now"
            let rates = report.uploading.compactMap(\.bytesPerSecond)
            if !rates.isEmpty { header += " · " + Self.rate(rates.reduce(0, +)) }
            let entries = report.uploading
            sections.append(
                Section(priority: 0, header: header, total: entries.count, shown: entries.count) { shown in
                    uploadingRows(Array(entries.prefix(shown)))
                })
        }
        if !report.interrupted.isEmpty {
            let entries = report.interrupted
            sections.append(
                Section(
                    priority: 3, header: "Interrupted (resumes on the next run)", total: entries.count,
                    shown: min(entries.count, rowsPerSection)
                ) { shown in
                    entries.prefix(shown).map { entry in
                        row("  ", entry.key, "  \(ByteCount.string(entry.bytesSent)) of \(ByteCount.string(entry.size))")
                    }
                })
        }
        if !report.upNext.isEmpty {
            let entries = report.upNext
            sections.append(
                Section(priority: 2, header: "Up next", total: entries.count, shown: min(entries.count, rowsPerSection)) { shown in
                    entries.prefix(shown).enumerated().map { index, entry in
                        row("  \(index + 1). ", entry.key, "  " + ByteCount.string(entry.size))
                    }
                })
        }
        if !report.failed.isEmpty {
            let entries = report.failed
            sections.append(
                Section(priority: 1, header: "Failed", total: entries.count, shown: min(entries.count, rowsPerSection)) { shown in
                    entries.prefix(shown).map(failedRow)
                })
        }
        if report.leftOnServer > 0 {
            let count = report.leftOnServer
            let line = "\(count) abandoned multipart upload\(count == 1 ? "" : "s") left on the server; the next run aborts \(count == 1 ? "it" : "them")"
            sections.append(Section(priority: 4, header: nil, total: 1, shown: 1) { _ in [fit(line)] })
        }
        if let last = report.lastCompleted {
            let when = format(last.uploadDate, .minute)
            sections.append(
                Section(priority: 5, header: nil, total: 1, shown: 1) { _ in
                    [row("Last completed: ", last.r2Key, "  \(last.formattedFileSize)  \(when)")]
                })
        }
        return sections
    }

    /// "  ↑ name  ▕███░░░▏   42%  4.2 MB / 10 MB  1.1 MB/s", names padded to one column (cut
    /// when long). A narrow terminal gets "  ↑  42%  name" instead.
    func uploadingRows(_ entries: [QueueReport.Entry]) -> [String] {
        let glyph = TrackIcon.uploading.glyph(ascii: style.ascii, colour: style.colour) ?? "^"
        let prefix = "  " + style.paint(glyph, TrackIcon.uploading.colour) + " "
        let figures = entries.map { entry in
            var text = "\(ProgressBars.percent(entry.bytesSent, of: entry.size))  "
                + "\(ByteCount.string(entry.bytesSent)) / \(ByteCount.string(entry.size))"
            if entry.state == UploadJobState.verifying.rawValue {
                text += "  verifying"
            } else if let rate = entry.bytesPerSecond {
                text += "  " + Self.rate(rate)
            }
            return text
        }
        let names = entries.map { TextColumns.printable($0.key) }
        let longest = names.map(TextColumns.displayWidth).max() ?? 0
        let bars = ProgressBars(width: width ?? 100, style: style)
        guard let width else {
            return entries.indices.map { index in
                prefix + ProgressBars.pad(names[index], to: longest) + "  "
                    + bars.bar(entries[index].bytesSent, of: entries[index].size, width: 20) + "  " + figures[index]
            }
        }
        let barWidth = min(20, max(6, width / 5))
        let widest = figures.map(TextColumns.displayWidth).max() ?? 0
        // "  ↑ " name "  " bar "  " figures
        let withBar = width - 4 - 2 - (barWidth + 2) - 2 - widest
        if withBar >= 8 {
            let column = min(longest, withBar)
            return entries.indices.map { index in
                prefix + ProgressBars.pad(ProgressBars.truncate(names[index], to: column, ascii: style.ascii), to: column) + "  "
                    + bars.bar(entries[index].bytesSent, of: entries[index].size, width: barWidth) + "  " + figures[index]
            }
        }
        // Too narrow for bars: the percent, then as much of the name as fits.
        return entries.indices.map { index in
            prefix + ProgressBars.percent(entries[index].bytesSent, of: entries[index].size) + "  "
                + ProgressBars.truncate(names[index], to: width - 10, ascii: style.ascii)
        }
    }

    /// "  ⚠ name (1cb3a283): reason; waits for r2up retry".
    func failedRow(_ entry: QueueReport.Entry) -> String {
        let glyph = TrackIcon.uploadError.glyph(ascii: style.ascii) ?? "!"
        let when =
            entry.state == UploadJobState.failedPermanent.rawValue
            ? "waits for r2up retry"
            : entry.nextAttemptAt.map { "next attempt " + format($0, .minute) } ?? "retried on the next run"
        let text = TextColumns.printable(
            "\(entry.key) (\(entry.id.uuidString.prefix(8).lowercased())): \(entry.lastError ?? "failed"); \(when)")
        let rest = width.map { ProgressBars.truncate(text, to: $0 - 4, ascii: style.ascii) } ?? text
        return "  " + style.paint(glyph, TrackIcon.uploadError.colour) + " " + rest
    }

    /// `lead` + `name` + `tail`, the name cut so the tail still fits; the whole line cut when even that does not.
    private func row(_ lead: String, _ name: String, _ tail: String) -> String {
        let name = TextColumns.printable(name)
        guard let width else { return lead + name + tail }
        let room = width - TextColumns.displayWidth(lead) - TextColumns.displayWidth(tail)
        if room >= 8 { return lead + ProgressBars.truncate(name, to: room, ascii: style.ascii) + tail }
        return fit(lead + name + tail)
    }

    /// A plain line (no colour codes) cut to the width.
    private func fit(_ line: String) -> String {
        guard let width else { return line }
        return ProgressBars.truncate(line, to: width, ascii: style.ascii)
    }

    private func format(_ date: Date, _ precision: ZonedTime.Precision) -> String {
        ZonedTime.text(date, timeZone: timeZone, precision: precision)
    }

    /// "1.1 MB/s"; rates are never negative.
    static func rate(_ bytesPerSecond: Double) -> String {
        let value = bytesPerSecond.isFinite ? max(0, bytesPerSecond.rounded()) : 0
        return ByteCount.string(value < 1e15 ? Int64(value) : 1_000_000_000_000_000) + "/s"
    }
}
