import Foundation
package import GRDB
public import R2UpModel

extension Store {
    /// The track at `path`, if r2up knows it.
    public func track(path: String) throws(StoreError) -> TrackRecord? {
        try read { db in try Self.fetchTrack(db, path: path) }
    }

    /// Records a queued file's size and mtime on its track (created when new); a track whose file
    /// changed is no longer "uploaded". A track whose size and mtime are the same is left as it
    /// is: queueing changes no state (a refused file keeps its own), its job's start and end do.
    /// One cached statement: a push or sync queues thousands.
    static func noteTrackFile(_ db: Database, path: String, size: Int64, mtimeNs: Int64, at time: Date) throws {
        try db.cachedStatement(sql: """
            INSERT INTO tracks (path, size, mtimeNs, updatedAt) VALUES (?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtimeNs = excluded.mtimeNs,
                uploadState = CASE WHEN uploadState = 'uploaded' THEN 'none' ELSE uploadState END,
                updatedAt = excluded.updatedAt
            WHERE size != excluded.size OR mtimeNs != excluded.mtimeNs
            """)
            .execute(arguments: [path, size, mtimeNs, StoreDate.text(time)])
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
            // The unfinished jobs of the folder, read once: a track is uploading while a live process
            // holds its job, and interrupted when nobody does (as `r2up queue` says).
            let jobs = try UploadJob.fetchAll(
                db,
                sql: "SELECT * FROM jobs WHERE path >= ? AND path < ? AND state IN ('staged', 'initiated', 'uploading', 'verifying')",
                arguments: [low, high])
            try Self.follow(db, &tracks, jobs: jobs, now: time)
            return tracks
        }
    }

    /// A track is uploading only while a live process works on its job; one whose run died
    /// shows as interrupted (not uploaded; the next run resumes it), never uploading forever,
    /// or, when what it left is a copy, uploaded at the object the copy is made from.
    static func checkLiveness(_ db: Database, _ track: inout TrackRecord, now: Date) throws {
        let jobs = try UploadJob.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM jobs WHERE path = ? AND state != 'completed'"), arguments: [track.path])
        guard !jobs.contains(where: { $0.lease?.isLive(now: now) == true }) else { return }
        if let copy = jobs.first(where: \.isCopy), jobs.allSatisfy(\.isCopy) {
            track.uploadState = copy.trackState()
            track.pendingCopyKey = copy.state.isFailed ? nil : copy.key
            return
        }
        track.uploadState = .none
        track.interrupted = true
    }

    package static func fetchTrack(_ db: Database, path: String) throws -> TrackRecord? {
        try TrackRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM tracks WHERE path = ?"), arguments: [path])
    }
}

extension TrackRecord {
    package mutating func setCloud(_ cloud: CloudCopy) {
        bucket = cloud.bucket
        key = cloud.key
        etag = cloud.etag
    }
}
