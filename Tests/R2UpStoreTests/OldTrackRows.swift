import GRDB

/// A `tracks` row as an older r2up left it, for the migration tests: written straight into the
/// table, bucket `tracks`, key `k/INDEX`, ETag `"eINDEX"`, 6 bytes.
struct OldTrackRow {
    var path: String
    var uploadState: String
    var downloadState = "none"
    var mtimeNs: Int64 = 1
    var device: Int64?
}

extension Database {
    /// Inserts `rows` into `tracks`, each with its index in the key and the ETag.
    func insertOldTracks(_ rows: [OldTrackRow]) throws {
        for (index, row) in rows.enumerated() {
            try execute(
                sql: """
                    INSERT INTO tracks (path, size, mtimeNs, uploadState, downloadState, bucket, "key", etag, device, updatedAt)
                    VALUES (?, 6, ?, ?, ?, 'tracks', ?, ?, ?, '2026-11-26T10:00:00.000Z')
                    """,
                arguments: [row.path, row.mtimeNs, row.uploadState, row.downloadState, "k/\(index)", "\"e\(index)\"", row.device])
        }
    }
}
