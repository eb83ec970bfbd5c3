import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List past uploads, newest first.",
            discussion: """
                Columns: date (local time), size, key, public URL. Needs only the database \
                (--db, R2UP_DB), no endpoint or credentials.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "How many uploads to list (0: all).")
        var limit = 20

        @Flag(help: "List every upload (same as --limit 0).")
        var all = false

        @Option(help: ArgumentHelp("Only uploads whose file name or key contains TEXT (any case).", valueName: "TEXT"))
        var grep: String?

        @Option(
            help: ArgumentHelp(
                "Only uploads since DATE: 2026-11-22, '2026-11-22 21:04' (local time), or an age such as 90m, 12h, 7d.",
                valueName: "DATE"))
        var since: String?

        @Flag(help: "Print a JSON array of the uploads (id, fileName, fileSize, r2Key, uploadDate, publicURL, bucket, etag, deletedAt).")
        var json = false

        func validate() throws {
            guard limit >= 0 else { throw ValidationError("--limit must be 0 (all) or more, got \(limit)") }
            if let since, HistorySince.date(since) == nil {
                throw ValidationError("--since '\(since)' is not a date like 2026-11-22 or '2026-11-22 21:04', nor an age like 7d")
            }
        }

        func run() async throws {
            var items: [UploadItem]
            var deleted: [UUID: Date] = [:]
            let shown = all || limit == 0 ? nil : limit
            var more = false
            var missing: String?  // the database path, when there is no database there
            do {
                let (store, path) = try ReadOnlyStore.openWithPath(global)
                if store == nil { missing = path }
                // One row past the limit says whether more exist.
                items = try store?.searchUploads(
                    containing: grep, since: since.flatMap { HistorySince.date($0) },
                    limit: shown.map { $0 + 1 }) ?? []
                if let shown, items.count > shown {
                    more = true
                    items.removeLast(items.count - shown)
                }
                deleted = try store?.deletionDates(of: items) ?? [:]
            } catch {
                throw CommandFailure(error)
            }
            if json {
                let entries = items.map { HistoryEntry(item: $0, deletedAt: deleted[$0.id]) }
                Terminal.output(entries.isEmpty ? "[]" : String(decoding: try HistoryEntry.json(entries), as: UTF8.self))
                return
            }
            guard !items.isEmpty else {
                // A database that is not there may be a typo in --db or R2UP_DB: name the path.
                let none = grep == nil && since == nil ? "No uploads yet." : "No uploads match."
                let said = missing.map { "No uploads yet: there is no database at \(TextColumns.printable($0))." } ?? none
                if !global.quiet { Terminal.error(said) }
                return
            }
            for line in HistoryTable.lines(items, deleted: deleted) { Terminal.output(line) }
            if more && !global.quiet {
                let latest = items.count == 1 ? "the latest upload" : "the latest \(items.count) uploads"
                Terminal.error("Showing \(latest); more exist: --limit N shows more, --all every one.")
            }
        }
    }
}

/// `history --since`: a local date ("2026-11-22", "2026-11-22 21:04") or an age ("90m", "12h", "7d", "2w").
enum HistorySince {
    static func date(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let unit = text.last, let count = Int(text.dropLast()), count >= 0, count <= 100_000 {
            let seconds: Int? = switch unit {
            case "s": 1
            case "m": 60
            case "h": 3600
            case "d": 86_400
            case "w": 604_800
            default: nil
            }
            if let seconds { return now.addingTimeInterval(-Double(count * seconds)) }
        }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "T" })
        guard (1...2).contains(fields.count) else { return nil }
        let day = fields[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard day.count == 3, let year = day[0], let month = day[1], let dayOfMonth = day[2] else { return nil }
        var hour = 0
        var minute = 0
        if fields.count == 2 {
            let clock = fields[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard clock.count == 2, let h = clock[0], let m = clock[1] else { return nil }
            hour = h
            minute = m
        }
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(dayOfMonth), (0...23).contains(hour),
            (0...59).contains(minute)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: dayOfMonth, hour: hour, minute: minute)
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == dayOfMonth  // no 31 February
        else { return nil }
        return date
    }
}

/// The store as the read-only commands (history, copy-url, status) open it.
enum ReadOnlyStore {
    /// The database the settings name (`LocalStore.openIfPresent(forReading:)`), or nil when it does
    /// not exist yet. Needs no endpoint, credentials or bucket.
    static func open(_ global: GlobalOptions) throws -> LocalStore? {
        try openWithPath(global).store
    }

    /// `open`, with the path it looked at (`history` names it when there is no database there).
    static func openWithPath(_ global: GlobalOptions) throws -> (store: LocalStore?, path: String) {
        let path = try global.settings().database.value
        return (try LocalStore.openIfPresent(forReading: path), path)
    }
}
