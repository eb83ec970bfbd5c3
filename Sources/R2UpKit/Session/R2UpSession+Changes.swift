import Foundation
import R2UpStore

/// Where ``R2UpSession/changedTracks(since:)`` goes on from: taken before a full read
/// (``R2UpSession/changeMark()``), then handed back by each read of the changes.
public struct ChangeMark: Sendable, Equatable {
    let date: Date
}

extension R2UpSession {
    /// The mark to take just before a full read (``libraryView(under:)``): changes from it on
    /// are what the read may have missed.
    public func changeMark() -> ChangeMark { ChangeMark(date: store.changeMark()) }

    /// The tracks whose row or upload job was written since `mark`, by this process or any
    /// other: a few rows, not the library, each with its icon as its file stands now (one
    /// `stat` each), as ``libraryView(under:)`` would show it. An app that shows a big library
    /// reads it once, then this after each ``storeChanges()`` signal. Rows written in the
    /// seconds before the mark come again (a write's time is taken before it commits): compare
    /// with what is shown. A track deleted from the store, or a file changed on disk with no
    /// write, is seen by the next full read only.
    /// - Returns: the tracks in path order, and the mark to ask from next.
    /// - Throws: ``R2UpFailure`` when the store cannot be read.
    public func changedTracks(since mark: ChangeMark) throws(R2UpFailure) -> (tracks: [TrackStatus], next: ChangeMark) {
        do {
            let changed = try store.tracksChanged(since: mark.date)
            return (changed.tracks.map { TrackStatus(TrackScan.following($0)) }, ChangeMark(date: changed.next))
        } catch { throw R2UpFailure(error) }
    }
}
