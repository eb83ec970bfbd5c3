public import Foundation
public import R2UpKit

/// `r2up ls` for people: folders first ("DIR"), then objects with their date and size.
///
/// ```
/// 2026-11-22 21:04      DIR  Live/
/// 2026-11-22 21:04     1 KB  01 Intro.m4a
/// ```
/// Names are shown below the listed prefix; dates are local time to the minute.
public enum ListingTable {
    public static func lines(_ listing: BucketListing, timeZone: TimeZone = .current) -> [String] {
        let below = { (key: String) in TextColumns.printable(String(key.dropFirst(listing.prefix.count))) }
        let folders = listing.folders.map { ["", "DIR", below($0)] }
        let objects = listing.objects.map { object in
            [
                object.lastModified.map { HistoryTable.date($0, timeZone: timeZone) } ?? "",
                ByteCount.string(object.size), below(object.key),
            ]
        }
        return TextColumns.lines(folders + objects, alignments: [.left, .right, .left])
    }

    /// The last line: "2 folders, 3 objects, 4.1 MB".
    /// `recursive` (`ls -r`, which lists no folders): "3 objects, 4.1 MB in total".
    public static func summary(_ listing: BucketListing, recursive: Bool = false) -> String {
        let bytes = listing.objects.reduce(Int64(0)) { $0 + $1.size }
        func count(_ n: Int, _ noun: String) -> String { "\(SyncSummary.count(n)) \(noun)\(n == 1 ? "" : "s")" }
        if recursive { return "\(count(listing.objects.count, "object")), \(ByteCount.string(bytes)) in total" }
        return "\(count(listing.folders.count, "folder")), \(count(listing.objects.count, "object")), \(ByteCount.string(bytes))"
    }
}
