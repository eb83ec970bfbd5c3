public import Foundation
public import R2UpKit

/// `r2up queue` as plain text: the counts, then what is uploading, interrupted, up next and
/// failed, what is left on the server, and the last completed upload. One report, printed once
/// (`QueueHUD` is the same report redrawn in place by `queue --watch`).
public struct QueueListing: Sendable {
    public var timeZone: TimeZone

    public init(timeZone: TimeZone = .current) {
        self.timeZone = timeZone
    }

    /// The report's lines, blank lines between sections; keys and errors with control
    /// characters printed escaped.
    public func lines(_ report: QueueReport) -> [String] {
        var header = "\(report.counts.queued) queued · \(report.counts.uploading) uploading · "
        if report.counts.interrupted > 0 { header += "\(report.counts.interrupted) interrupted · " }
        header += "\(report.counts.failed) failed"
        if let error = report.lastError { header += " — last error: \(TextColumns.printable(error))" }
        var lines = [header]
        func section(_ title: String, _ rows: [String]) {
            guard !rows.isEmpty else { return }
            lines += ["", title] + rows
        }
        section("Uploading now", report.uploading.map { entry in
            let percent = entry.size > 0 ? Int(Double(entry.bytesSent) / Double(entry.size) * 100) : 100
            let phase = entry.state == UploadJobState.verifying.rawValue ? ", verifying" : ""
            return "  ↑ \(Self.name(entry))  \(ByteCount.string(entry.bytesSent)) of \(ByteCount.string(entry.size)) (\(percent)%\(phase))"
        })
        section("Interrupted (resumes on the next run)", report.interrupted.map { entry in
            "  \(Self.name(entry))  \(ByteCount.string(entry.bytesSent)) of \(ByteCount.string(entry.size)) (\(Self.shortID(entry.id)))"
        })
        section("Up next", report.upNext.enumerated().map { index, entry in
            "  \(index + 1). \(Self.name(entry))  \(ByteCount.string(entry.size))"
        })
        section("Failed", report.failed.map { entry in
            let when =
                entry.state == UploadJobState.failedPermanent.rawValue
                ? "waits for r2up retry"
                : entry.nextAttemptAt.map { "next attempt \(format($0))" } ?? "retried on the next run"
            return "  ⚠ \(Self.name(entry)) (\(Self.shortID(entry.id))): \(TextColumns.printable(entry.lastError ?? "failed")); \(when)"
        })
        if report.leftOnServer > 0 {
            let count = report.leftOnServer
            lines += ["", "\(count) abandoned multipart upload\(count == 1 ? "" : "s") left on the server; the next run aborts \(count == 1 ? "it" : "them")"]
        }
        if let last = report.lastCompleted {
            lines += [
                "", "Last completed",
                "  \(TextColumns.printable(last.r2Key))  \(last.formattedFileSize)  \(format(last.uploadDate))  \(last.publicURL.absoluteString)",
            ]
        }
        return lines
    }

    /// The job's key, and for a moved track's server-side copy the key it copies from.
    static func name(_ entry: QueueReport.Entry) -> String {
        TextColumns.printable(entry.key) + (entry.copyOf.map { " (copy of \(TextColumns.printable($0)))" } ?? "")
    }

    /// The first 8 characters of a job id, as `queue cancel` and `retry` take them.
    public static func shortID(_ id: UUID) -> String { String(id.uuidString.prefix(8)).lowercased() }

    private func format(_ date: Date) -> String {
        ZonedTime.text(date, timeZone: timeZone)
    }
}
