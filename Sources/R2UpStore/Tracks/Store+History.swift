import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// The latest uploads, newest first; served from the `uploadDate` index however long the history.
    public func recentUploads(limit: Int) throws(StoreError) -> [UploadItem] {
        try read { db in
            try UploadItem.fetchAll(db, sql: Self.recentUploadsSQL, arguments: [max(limit, 0)])
        }
    }

    /// The query behind `recentUploads`, kept here so a test can check its plan.
    static let recentUploadsSQL = "SELECT * FROM history ORDER BY uploadDate DESC LIMIT ?"

    /// The upload `text` names (`copy-url ID|KEY|FILE`): by id, else by key, else by file
    /// name (a path counts by its last component); the newest when several match.
    public func upload(matching text: String) throws(StoreError) -> UploadItem? {
        try read { db in
            // A file r2up tracks: the latest upload (or copy) of the key its track holds now.
            if let track = try Row.fetchOne(
                db, sql: #"SELECT bucket, "key" FROM tracks WHERE path = ? AND "key" IS NOT NULL"#,
                arguments: [FilePath.absolute(text)]),
                let bucket = track["bucket"] as String?, let key = track["key"] as String?,
                let item = try UploadItem.fetchOne(
                    db, sql: "SELECT * FROM history WHERE bucket = ? AND r2Key = ? ORDER BY uploadDate DESC LIMIT 1",
                    arguments: [bucket, key])
            {
                return item
            }
            if let id = UUID(uuidString: text),
                let item = try UploadItem.fetchOne(db, sql: "SELECT * FROM history WHERE id = ?", arguments: [id.uuidString])
            {
                return item
            }
            var columnsAndValues: [(String, String)] = [("r2Key", text), ("fileName", text)]
            let name = (text as NSString).lastPathComponent
            if name != text && !name.isEmpty { columnsAndValues.append(("fileName", name)) }
            for (column, value) in columnsAndValues {
                let sql = "SELECT * FROM history WHERE \(column) = ? ORDER BY uploadDate DESC LIMIT 1"
                if let item = try UploadItem.fetchOne(db, sql: sql, arguments: [value]) { return item }
            }
            return nil
        }
    }

    /// Uploads whose id starts with `prefix` (as `history` shows the first 8 characters), at most
    /// `limit`; none for text that cannot begin an id.
    public func uploads(idPrefix prefix: String, limit: Int = 2) throws(StoreError) -> [UploadItem] {
        let needle = prefix.uppercased()
        guard needle.count >= 4, needle.count <= 36, needle.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return [] }
        return try read { db in
            try UploadItem.fetchAll(
                db, sql: "SELECT * FROM history WHERE substr(id, 1, ?) = ? ORDER BY uploadDate DESC LIMIT ?",
                arguments: [needle.count, needle, limit])
        }
    }

    /// The newest upload of the same file as `item` (same name, size and ETag) whose object was
    /// not deleted since: where a deleted upload's file lives now.
    public func liveUpload(sameAs item: UploadItem) throws(StoreError) -> UploadItem? {
        let candidates = try read { db in
            try UploadItem.fetchAll(
                db, sql: "SELECT * FROM history WHERE fileName = ? AND fileSize = ? AND etag IS ? AND id != ? ORDER BY uploadDate DESC LIMIT 20",
                arguments: [item.fileName, item.fileSize, item.etag, item.id.uuidString])
        }
        let deleted = try deletionDates(of: candidates)
        return candidates.first { deleted[$0.id] == nil }
    }

    /// How many uploads the history holds.
    public func uploadCount() throws(StoreError) -> Int {
        try read { db in try UploadItem.fetchCount(db) }
    }
}
