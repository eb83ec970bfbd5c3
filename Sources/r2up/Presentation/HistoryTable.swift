public import Foundation
public import R2UpKit

/// `r2up history` for people: one line per upload, newest first as given.
///
/// ```
/// DATE                  SIZE       KEY                URL
/// 2026-11-22 21:04 UTC     1 KB    albums/a.m4a       https://pub.example.com/albums/a.m4a
/// ```
/// Dates are local time to the minute with their zone, sizes as `ByteCount` writes them (right-aligned),
/// columns aligned by display width, control characters in keys shown as "?".
public enum HistoryTable {
    public static let header = ["DATE", "SIZE", "KEY", "URL"]

    /// The table's lines, header first.
    /// A server-side copy (a moved track) says "(copy of OLDKEY)" after its URL.
    /// `deleted`: uploads whose object `r2up rm` deleted since, and when; their URL reads "(deleted DATE)".
    public static func lines(_ items: [UploadItem], deleted: [UUID: Date] = [:], timeZone: TimeZone = .current) -> [String] {
        let rows = items.map { item in
            [
                date(item.uploadDate, timeZone: timeZone), ByteCount.string(item.fileSize),
                TextColumns.printable(item.r2Key),
                (deleted[item.id].map { "(deleted \(date($0, timeZone: timeZone)))" }
                    ?? TextColumns.printable(item.publicURL.absoluteString))
                    + (item.copiedFrom.map { " (copy of \(TextColumns.printable($0)))" } ?? ""),
            ]
        }
        return TextColumns.lines([header] + rows, alignments: [.left, .right, .left, .left])
    }

    /// "2026-11-22 21:04 UTC": the date in `timeZone`, to the minute, with its zone, whatever the locale.
    public static func date(_ date: Date, timeZone: TimeZone = .current) -> String {
        ZonedTime.text(date, timeZone: timeZone)
    }
}
