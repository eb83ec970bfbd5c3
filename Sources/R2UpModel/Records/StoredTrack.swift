public import Foundation

/// A track with what offloading and fetching need beyond `TrackRecord`: the content digest its
/// upload recorded and when its cloud copy was last made (its newest history row, else the
/// track's last update, as for a track r2up only downloaded).
public struct StoredTrack: Sendable, Equatable {
    public var track: TrackRecord
    public var digest: String?
    public var uploadedAt: Date

    package init(track: TrackRecord, digest: String?, uploadedAt: Date) {
        self.track = track
        self.digest = digest
        self.uploadedAt = uploadedAt
    }
}
