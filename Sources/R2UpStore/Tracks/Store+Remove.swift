public import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// After `r2up rm` deleted `keys` from `bucket`: each deletion is recorded (history rows
    /// stay as they were and read as deleted), and the tracks that pointed at those objects
    /// lose their cloud copy: local only where the file is here.
    public func recordDeletions(bucket: String, keys: [String], at date: Date = Date()) throws(StoreError) {
        let time = StoreDate.text(date)
        try write { db in
            for key in keys {
                try db.execute(
                    sql: #"INSERT INTO deletions (bucket, "key", deletedAt) VALUES (?, ?, ?)"#,
                    arguments: [bucket, key, time])
                try db.execute(
                    sql: """
                        UPDATE tracks SET uploadState = 'none', bucket = NULL, "key" = NULL, etag = NULL, updatedAt = ?
                        WHERE bucket = ? AND "key" = ?
                        """,
                    arguments: [time, bucket, key])
            }
        }
    }

    /// For each upload in `items` whose object was deleted after it was uploaded: when.
    public func deletionDates(of items: [UploadItem]) throws(StoreError) -> [UUID: Date] {
        guard !items.isEmpty else { return [:] }
        return try read { db in
            var dates: [UUID: Date] = [:]
            for item in items {
                let sql = #"SELECT MAX(deletedAt) FROM deletions WHERE bucket = ? AND "key" = ? AND deletedAt >= ?"#
                if let date = try Date.fetchOne(db, sql: sql, arguments: [item.bucket, item.r2Key, StoreDate.text(item.uploadDate)]) {
                    dates[item.id] = date
                }
            }
            return dates
        }
    }
}

extension Store {
    /// `history --grep/--since/--limit/--all`: uploads newest first, those whose file name or
    /// key contains `text` (any case, ASCII), uploaded at or after `since`; `limit` nil is all.
    /// Whether the first text holds the second in any case, Unicode letters included.
    private static let containsAnyCase = DatabaseFunction("r2up_contains_any_case", argumentCount: 2, pure: true) { values in
        guard values.count == 2, let text = String.fromDatabaseValue(values[0]), let part = String.fromDatabaseValue(values[1])
        else { return false }
        return text.range(of: part, options: .caseInsensitive) != nil
    }

    public func searchUploads(containing text: String?, since: Date?, limit: Int?) throws(StoreError) -> [UploadItem] {
        try read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let text, !text.isEmpty {
                // SQLite's lower() folds ASCII only: "DÉJÀ" would not find "déjà".
                db.add(function: Self.containsAnyCase)
                conditions.append("(r2up_contains_any_case(fileName, ?) OR r2up_contains_any_case(r2Key, ?))")
                arguments += [text, text]
            }
            if let since {
                conditions.append("uploadDate >= ?")
                arguments += [StoreDate.text(since)]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            arguments += [limit.map { max($0, 0) } ?? -1]  // SQLite: LIMIT -1 is no limit
            return try UploadItem.fetchAll(
                db, sql: "SELECT * FROM history \(filter) ORDER BY uploadDate DESC LIMIT ?", arguments: arguments)
        }
    }
}

extension Store {
    /// The paths of the tracks whose cloud copy is one of `keys` in `bucket`, by key (`rm`'s
    /// guard for offloaded tracks: it checks which of those files are gone).
    public func trackPaths(bucket: String, keys: [String]) throws(StoreError) -> [String: [String]] {
        guard !keys.isEmpty else { return [:] }
        return try read { db in
            var found: [String: [String]] = [:]
            let statement = try db.cachedStatement(sql: #"SELECT path FROM tracks WHERE bucket = ? AND "key" = ? ORDER BY path"#)
            for key in Set(keys) {
                let paths = try String.fetchAll(statement, arguments: [bucket, key])
                if !paths.isEmpty { found[key] = paths }
            }
            return found
        }
    }
}
