import Foundation
internal import GRDB

extension Store {
    /// The cached HEAD details of a bucket's objects under a prefix, by key.
    public func catalogObjects(bucket: String, prefix: String) throws(StoreError) -> [String: CatalogObject] {
        try read { db in
            var result: [String: CatalogObject] = [:]
            let rows = try Row.fetchCursor(
                db, sql: #"SELECT "key", etag, size, contentType, lastModified, metadata FROM catalog_objects WHERE bucket = ? AND substr("key", 1, ?) = ?"#,
                arguments: [bucket, prefix.utf8.count, prefix])
            while let row = try rows.next() {
                let key: String = row["key"]
                let metadataText: String = row["metadata"]
                let metadata = Self.stringMap(json: metadataText)
                    ?? (try? JSONDecoder().decode([String: String].self, from: Data(metadataText.utf8))) ?? [:]
                let modified: Double? = row["lastModified"]
                result[key] = CatalogObject(
                    etag: row["etag"], size: row["size"], contentType: row["contentType"],
                    lastModified: modified.map { Date(timeIntervalSince1970: $0) }, metadata: metadata)
            }
            return result
        }
    }

    /// The local files of tracks uploaded to `bucket` under a prefix, by key (for `catalog
    /// publish` to find their album art on this machine).
    public func localPaths(bucket: String, prefix: String) throws(StoreError) -> [String: String] {
        try read { db in
            var result: [String: String] = [:]
            let rows = try Row.fetchCursor(
                db, sql: #"SELECT "key", path FROM tracks WHERE bucket = ? AND "key" IS NOT NULL AND substr("key", 1, ?) = ?"#,
                arguments: [bucket, prefix.utf8.count, prefix])
            while let row = try rows.next() { result[row["key"]] = row["path"] }
            return result
        }
    }

    /// Records what HEADs told, and forgets objects that are gone, in one transaction.
    public func updateCatalogObjects(bucket: String, saving: [String: CatalogObject], removing: [String]) throws(StoreError) {
        guard !saving.isEmpty || !removing.isEmpty else { return }
        try write { db in
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO catalog_objects (bucket, "key", etag, size, contentType, lastModified, metadata)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for (key, object) in saving {
                let metadata = Self.json(stringMap: object.metadata)
                try upsert.execute(arguments: [
                    bucket, key, object.etag, object.size, object.contentType,
                    object.lastModified?.timeIntervalSince1970, metadata,
                ])
            }
            let delete = try db.cachedStatement(sql: #"DELETE FROM catalog_objects WHERE bucket = ? AND "key" = ?"#)
            for key in removing { try delete.execute(arguments: [bucket, key]) }
        }
    }
}
