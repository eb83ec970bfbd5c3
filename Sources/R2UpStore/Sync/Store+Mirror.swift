public import Foundation
internal import GRDB

/// An object in the bucket that this store uploaded from a file under a synced folder and that
/// no file holds any more (`sync --delete` removes it).
public struct StaleObject: Sendable, Equatable {
    public var key: String
    /// The ETag this store last recorded for it: an object that differs was written by someone else.
    public var etag: String?
    /// The file it was uploaded from.
    public var path: String
    /// True: its track moved to another key (or was pushed to one); false: the file is gone.
    public var moved: Bool

    public init(key: String, etag: String?, path: String, moved: Bool) {
        self.key = key
        self.etag = etag
        self.path = path
        self.moved = moved
    }
}

extension Store {
    /// The keys under `prefix` in `bucket` that a completed upload or copy of a file under
    /// `folder` wrote, that no track holds now, and that were not deleted since: the old
    /// objects of tracks that moved to another key. Never a key another track holds, never
    /// one this store did not write.
    public func movedAwayObjects(under folder: String, bucket: String, prefix: String) throws(StoreError) -> [StaleObject] {
        var root = folder
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        return try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: #"""
                    SELECT o.path, o."key",
                        (SELECT h.etag FROM history h WHERE h.bucket = ? AND h.r2Key = o."key" ORDER BY h.uploadDate DESC LIMIT 1)
                    FROM (
                        SELECT MAX(j.path) AS path, j."key" AS "key", MAX(j.updatedAt) AS done FROM jobs j
                        WHERE j.state = 'completed' AND j.bucket = ? AND j.path >= ? AND j.path < ?
                            AND substr(j."key", 1, ?) = ?
                            AND NOT EXISTS (SELECT 1 FROM tracks t WHERE t.bucket = j.bucket AND t."key" = j."key")
                        GROUP BY j."key"
                    ) o
                    WHERE NOT EXISTS (SELECT 1 FROM deletions d WHERE d.bucket = ? AND d."key" = o."key" AND d.deletedAt >= o.done)
                    ORDER BY o."key"
                    """#,
                arguments: [bucket, bucket, root + "/", root + "0", prefix.utf8.count, prefix, bucket])
            return rows.map { StaleObject(key: $0[1], etag: $0[2], path: $0[0], moved: true) }
        }
    }

    /// The old keys under `prefix` of tracks that moved: a later copy came from each, no track
    /// holds it, and nothing was uploaded to it since; with the ETag this store last recorded
    /// there. The catalog leaves them out, so a renamed track is listed once.
    public func supersededKeys(bucket: String, prefix: String) throws(StoreError) -> [String: String?] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: #"""
                    SELECT h.copiedFrom,
                        (SELECT o.etag FROM history o WHERE o.bucket = h.bucket AND o.r2Key = h.copiedFrom ORDER BY o.uploadDate DESC LIMIT 1)
                    FROM history h
                    WHERE h.bucket = ? AND h.copiedFrom IS NOT NULL AND substr(h.copiedFrom, 1, ?) = ?
                        AND NOT EXISTS (SELECT 1 FROM tracks t WHERE t.bucket = h.bucket AND t."key" = h.copiedFrom)
                        AND NOT EXISTS (
                            SELECT 1 FROM history n WHERE n.bucket = h.bucket AND n.r2Key = h.copiedFrom AND n.uploadDate > h.uploadDate)
                    """#,
                arguments: [bucket, prefix.utf8.count, prefix])
            var keys: [String: String?] = [:]
            for row in rows { keys[row[0] as String] = row[1] as String? }
            return keys
        }
    }

    /// How many objects under `prefix` in `bucket` the uploaded tracks under `folder` hold:
    /// what `sync --delete`'s share of deletions is measured against.
    public func mirroredObjectCount(under folder: String, bucket: String, prefix: String) throws(StoreError) -> Int {
        var root = folder
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        return try read { db in
            try Int.fetchOne(
                db,
                sql: #"""
                    SELECT COUNT(*) FROM tracks WHERE path >= ? AND path < ? AND uploadState = 'uploaded' AND bucket = ?
                        AND "key" IS NOT NULL AND substr("key", 1, ?) = ?
                    """#,
                arguments: [root + "/", root + "0", bucket, prefix.utf8.count, prefix]) ?? 0
        }
    }

    /// `sync --delete` removed these objects: recorded as `rm` records deletions (history rows
    /// say so), and the tracks whose files are gone are forgotten (nothing is left of them,
    /// here or in the bucket), so `status` and the catalog do not show them.
    public func recordMirrorDeletions(bucket: String, objects: [StaleObject], at date: Date = Date()) throws(StoreError) {
        guard !objects.isEmpty else { return }
        try recordDeletions(bucket: bucket, keys: objects.map(\.key), at: date)
        try write { db in
            for object in objects where !object.moved {
                try db.execute(
                    sql: #"DELETE FROM tracks WHERE path = ? AND "key" IS NULL AND downloadState != 'downloading'"#,
                    arguments: [object.path])
            }
        }
    }
}
