package import Foundation
internal import GRDB
package import R2UpModel

extension Store {
    /// How far before a read the next one starts asking: a write takes its `updatedAt` before
    /// its transaction commits, so a row committed after a read may carry an earlier time.
    static let changeSlack: TimeInterval = 3

    /// Where a reader of ``tracksChanged(since:)`` starts when it reads everything now: a little
    /// before now (``changeSlack``).
    package func changeMark() -> Date { now().addingTimeInterval(-Self.changeSlack) }

    /// The tracks whose row, or one of whose jobs, was written at or after `since` (by
    /// `updatedAt`), each as ``tracks(under:)`` gives it (uploading only while a live process
    /// holds its job), in path order, and where to ask from next. Rows written just before the
    /// mark come again: the caller compares with what it shows. A few rows, not the library.
    package func tracksChanged(since: Date) throws(StoreError) -> (tracks: [TrackRecord], next: Date) {
        let next = changeMark()
        let time = now()
        let mark = StoreDate.text(since)
        let tracks = try read { db in
            let paths = try String.fetchAll(
                db, sql: "SELECT path FROM tracks WHERE updatedAt >= ?1 UNION SELECT path FROM jobs WHERE updatedAt >= ?1 ORDER BY path",
                arguments: [mark])
            var tracks: [TrackRecord] = []
            var jobs: [UploadJob] = []
            for path in paths {
                guard let track = try Self.fetchTrack(db, path: path) else { continue }
                tracks.append(track)
                jobs += try UploadJob.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM jobs WHERE path = ? AND state IN ('staged', 'initiated', 'uploading', 'verifying')"),
                    arguments: [path])
            }
            try Self.follow(db, &tracks, jobs: jobs, now: time)
            return tracks
        }
        return (tracks, next)
    }

    /// Each track as its unfinished jobs (`jobs`, read in the same transaction) say: uploading
    /// while a live process holds one, interrupted when nobody does (as `r2up queue` says). A
    /// copy nobody makes leaves its track uploaded at the object it copies from, the copy's key
    /// noted (`pendingCopyKey`).
    static func follow(_ db: Database, _ tracks: inout [TrackRecord], jobs: [UploadJob], now time: Date) throws {
        var owners: [ProcessIdentity: Bool] = [:]
        var live: [String: Bool] = [:]
        var copies: [String: UploadJob] = [:]
        for job in jobs {
            let held =
                job.lease.map { lease in
                    let alive = owners[lease.owner] ?? lease.owner.isAlive
                    owners[lease.owner] = alive
                    return lease.isLive(now: time, ownerAlive: alive)
                } ?? false
            if job.isCopy, !held {
                copies[job.path] = job
                continue
            }
            live[job.path] = (live[job.path] ?? false) || held
        }
        for index in tracks.indices {
            if let copy = copies[tracks[index].path] {
                tracks[index].pendingCopyKey = copy.key
                tracks[index].uploadState = copy.trackState()
            }
            switch live[tracks[index].path] {
            case true?: tracks[index].uploadState = .uploading
            case false?:
                tracks[index].uploadState = .none
                tracks[index].interrupted = true
            case nil:
                // No unfinished job: "uploading" left by a run that died before it queued one.
                if tracks[index].uploadState == .uploading { try checkLiveness(db, &tracks[index], now: time) }
            }
        }
    }
}
