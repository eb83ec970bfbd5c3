import Foundation
import GRDB
@testable public import R2UpModel
@testable public import R2UpStore

// Test set-up only: rows written straight into the store, as a state r2up's commands reach
// through their own paths (the queue, pull). Production never calls these, so they live here,
// not in R2UpStore. Shared by the test targets through R2UpTestSupport.

extension Store {
    /// A track seen with this size and mtime (created with no state when new); one whose size
    /// or mtime moved is no longer uploaded.
    @discardableResult
    public func upsertTrack(path: String, size: Int64, mtimeNs: Int64) throws -> TrackRecord {
        let time = now()
        return try write { db in
            var track = try Self.fetchTrack(db, path: path) ?? TrackRecord(path: path, size: size, mtimeNs: mtimeNs, updatedAt: time)
            if track.id != nil, track.size == size, track.mtimeNs == mtimeNs { return track }
            if track.id != nil, track.uploadState == .uploaded { track.uploadState = .none }
            track.size = size
            track.mtimeNs = mtimeNs
            track.updatedAt = time
            try track.save(db)
            return track
        }
    }

    /// A known track's upload state and error, and its cloud copy when given.
    @discardableResult
    public func setUploadState(path: String, state: UploadState, error: String? = nil, cloud: CloudCopy? = nil) throws -> TrackRecord {
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

    /// A history row on its own (a run writes it with its job and track: `Store.publish`).
    public func recordUpload(_ item: UploadItem) throws {
        try write { db in try item.insert(db) }
    }
}
