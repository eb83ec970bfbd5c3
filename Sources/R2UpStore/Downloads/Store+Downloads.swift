import Foundation
internal import GRDB
public import R2UpModel

extension Store {
    /// Marks the track at `path` as downloading from `cloud`, creating its row if r2up did not know it.
    @discardableResult
    public func beginDownload(path: String, size: Int64, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        try updateDownload(path: path, size: size, mtimeNs: 0, cloud: cloud) { track in
            track.downloadState = .downloading
            track.lastError = nil
        }
    }

    /// Marks the track downloaded: the file on disk (this size and mtime) is the cloud copy.
    @discardableResult
    public func finishDownload(path: String, size: Int64, mtimeNs: Int64, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        try updateDownload(path: path, size: size, mtimeNs: mtimeNs, cloud: cloud) { track in
            track.size = size
            track.mtimeNs = mtimeNs
            track.downloadState = .downloaded
            track.lastError = nil
        } then: { db in
            // The file is back: no longer an offloaded track's only copy.
            try db.execute(sql: "UPDATE tracks SET offloadedETag = NULL WHERE path = ?", arguments: [path])
        }
    }

    /// Marks the track's download failed, with the reason `status` shows.
    @discardableResult
    public func failDownload(path: String, reason: String, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        try updateDownload(path: path, size: 0, mtimeNs: 0, cloud: cloud) { track in
            track.downloadState = .error
            track.lastError = reason
        }
    }

    /// One commit: the track at `path` (made with `size` and `mtimeNs` if new) changed by
    /// `change`, with its cloud copy and the time.
    private func updateDownload(
        path: String, size: Int64, mtimeNs: Int64, cloud: CloudCopy, _ change: (inout TrackRecord) -> Void,
        then: (Database) throws -> Void = { _ in }
    ) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            var track = try Self.fetchTrack(db, path: path) ?? TrackRecord(path: path, size: size, mtimeNs: mtimeNs, updatedAt: time)
            change(&track)
            track.setCloud(cloud)
            track.updatedAt = time
            try track.save(db)
            try then(db)
            return track
        }
    }

    /// Tracks whose last download failed, with their cloud copy: what `r2up retry` pulls again.
    public func failedDownloads() throws(StoreError) -> [TrackRecord] {
        try read { db in
            try TrackRecord.fetchAll(
                db, sql: "SELECT * FROM tracks WHERE downloadState = 'error' AND key IS NOT NULL ORDER BY path")
        }
    }

    /// The part size of the multipart upload r2up made of `key` that has this ETag, from its
    /// track's content digest ("p:CHECK:PART SIZE:…", `ContentDigest`): how `pull` checks the
    /// bytes against a multipart ETag without asking the server. Nil when no track says.
    public func uploadPartSize(bucket: String, key: String, etag: String) throws(StoreError) -> Int64? {
        try read { db in
            let digests = try String.fetchAll(
                db,
                sql: """
                    SELECT digest FROM tracks WHERE bucket = ? AND "key" = ? AND lower(etag) = lower(?) AND digest LIKE 'p:%'
                    """, arguments: [bucket, key, etag])
            for digest in digests {
                let fields = digest.split(separator: ":")
                if fields.count == 4, let size = Int64(fields[2]), size > 0 { return size }
            }
            return nil
        }
    }
}
