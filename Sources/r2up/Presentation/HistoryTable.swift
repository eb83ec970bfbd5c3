public import Foundation
public import R2UpKit

/// `r2up history` for people: one line per upload, newest first as given.
///
/// ```
/// DATE              SIZE       KEY                URL
/// 2026-11-22 21:04     1 KB    albums/a.m4a       https://pub.example.com/albums/a.m4a
/// ```
/// Dates are local time to the minute, sizes as `ByteCount` writes them (right-aligned),
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

    /// "2026-11-22 21:04": the date in `timeZone`, to the minute, whatever the locale.
    public static func date(_ date: Date, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))"
    }
}
