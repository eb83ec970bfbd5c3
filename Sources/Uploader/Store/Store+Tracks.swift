import Foundation
import GRDB

extension Store {
    /// The track at `path`, if r2up knows it.
    public func track(path: String) throws(StoreError) -> TrackRecord? {
        try read { db in try Self.fetchTrack(db, path: path) }
    }

    /// Records a file as seen now with this size and mtime, and returns its row.
    ///
    /// When the file is new its states are `none`. When its size or mtime moved, an
    /// `uploaded` state falls back to `none`: the cloud copy no longer matches it.
    @discardableResult
    public func upsertTrack(path: String, size: Int64, mtimeNs: Int64) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in try Self.upsertTrack(db, path: path, size: size, mtimeNs: mtimeNs, at: time) }
    }

    @discardableResult
    static func upsertTrack(_ db: Database, path: String, size: Int64, mtimeNs: Int64, at time: Date) throws -> TrackRecord {
        guard var track = try fetchTrack(db, path: path) else {
            var track = TrackRecord(path: path, size: size, mtimeNs: mtimeNs, updatedAt: time)
            try track.insert(db)
            return track
        }
        guard track.size != size || track.mtimeNs != mtimeNs else { return track }
        track.size = size
        track.mtimeNs = mtimeNs
        if track.uploadState == .uploaded { track.uploadState = .none }
        track.updatedAt = time
        try track.update(db)
        return track
    }

    /// Records a queued file's size and mtime on its track (created when new); an uploaded
    /// track is no longer "uploaded". `upsertTrack` without reading the row back, in one cached
    /// statement: a push or sync queues thousands. With `onlyIfChanged` (push) a track whose
    /// size and mtime are the same is left as it is; sync queues such a file only when its cloud
    /// copy is missing, so there it goes back to "none" too.
    static func noteTrackFile(
        _ db: Database, path: String, size: Int64, mtimeNs: Int64, at time: Date, onlyIfChanged: Bool
    ) throws {
        try db.cachedStatement(sql: """
            INSERT INTO tracks (path, size, mtimeNs, updatedAt) VALUES (?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtimeNs = excluded.mtimeNs,
                uploadState = CASE WHEN uploadState = 'uploaded' THEN 'none' ELSE uploadState END,
                updatedAt = excluded.updatedAt
            """ + (onlyIfChanged ? " WHERE size != excluded.size OR mtimeNs != excluded.mtimeNs" : ""))
            .execute(arguments: [path, size, mtimeNs, StoreDate.text(time)])
    }

    /// Sets a track's upload state, its error text, and (when given) where its cloud copy is.
    /// - Parameters:
    ///   - path: the track; it must exist (`upsertTrack`).
    ///   - state: the new state.
    ///   - error: why it failed; cleared when nil.
    ///   - cloud: the cloud copy; the stored one is kept when nil.
    @discardableResult
    public func setUploadState(
        path: String, state: UploadState, error: String? = nil, cloud: CloudCopy? = nil
    ) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            guard var track = try Self.fetchTrack(db, path: path) else { throw StoreError.notFound("track \(path)") }
            track.uploadState = state
            track.lastError = error
            if let cloud { track.setCloud(cloud) }
            track.updatedAt = time
            try track.update(db)
            return track
        }
    }

    /// Sets a track's download state and its error text (cleared when nil).
    @discardableResult
    public func setDownloadState(
        path: String, state: DownloadState, error: String? = nil
    ) throws(StoreError) -> TrackRecord {
        let time = now()
        return try write { db in
            guard var track = try Self.fetchTrack(db, path: path) else { throw StoreError.notFound("track \(path)") }
            track.downloadState = state
            track.lastError = error
            track.updatedAt = time
            try track.update(db)
            return track
        }
    }

    /// The tracks in a folder and all its subfolders, by path.
    public func tracks(under folder: String) throws(StoreError) -> [TrackRecord] {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        if prefix == "/" { prefix = "" }
        // A range on the UNIQUE(path) index: "dir/" ≤ path < "dir0" ('0' follows '/').
        let low = prefix + "/"
        let high = prefix + "0"
        let time = now()
        return try read { db in
            var tracks = try TrackRecord.fetchAll(
                db, sql: "SELECT * FROM tracks WHERE path >= ? AND path < ? ORDER BY path", arguments: [low, high])
            for index in tracks.indices where tracks[index].uploadState == .uploading {
                try Self.checkLiveness(db, &tracks[index], now: time)
            }
            return tracks
        }
    }

    /// A track is uploading only while a live process works on its job; one whose run died
    /// shows as interrupted (not uploaded; the next run resumes it), never uploading forever.
    static func checkLiveness(_ db: Database, _ track: inout TrackRecord, now: Date) throws {
        let jobs = try UploadJob.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM jobs WHERE path = ? AND state != 'completed'"), arguments: [track.path])
        guard !jobs.contains(where: { $0.lease?.isLive(now: now) == true }) else { return }
        track.uploadState = .none
        track.interrupted = true
    }

    static func fetchTrack(_ db: Database, path: String) throws -> TrackRecord? {
        try TrackRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM tracks WHERE path = ?"), arguments: [path])
    }
}

extension TrackRecord {
    mutating func setCloud(_ cloud: CloudCopy) {
        bucket = cloud.bucket
        key = cloud.key
        etag = cloud.etag
    }
}
