import Foundation
import GRDB

extension Store {
    /// Marks the track at `path` as downloading from `cloud`, creating its row if r2up did not know it.
    @discardableResult
    public func beginDownload(path: String, size: Int64, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            var track = try Self.fetchTrack(db, path: path) ?? TrackRecord(path: path, size: size, mtimeNs: 0, updatedAt: time)
            track.downloadState = .downloading
            track.lastError = nil
            track.setCloud(cloud)
            track.updatedAt = time
            try track.save(db)
            return track
        }
    }

    /// Marks the track downloaded: the file on disk (this size and mtime) is the cloud copy.
    @discardableResult
    public func finishDownload(path: String, size: Int64, mtimeNs: Int64, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            var track = try Self.fetchTrack(db, path: path) ?? TrackRecord(path: path, size: size, mtimeNs: mtimeNs, updatedAt: time)
            track.size = size
            track.mtimeNs = mtimeNs
            track.downloadState = .downloaded
            track.lastError = nil
            track.setCloud(cloud)
            track.updatedAt = time
            try track.save(db)
            return track
        }
    }

    /// Marks the track's download failed, with the reason `status` shows.
    @discardableResult
    public func failDownload(path: String, reason: String, cloud: CloudCopy) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            var track = try Self.fetchTrack(db, path: path) ?? TrackRecord(path: path, size: 0, mtimeNs: 0, updatedAt: time)
            track.downloadState = .error
            track.lastError = reason
            track.setCloud(cloud)
            track.updatedAt = time
            try track.save(db)
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
}
