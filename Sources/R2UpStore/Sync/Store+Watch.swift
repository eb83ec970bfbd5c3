import Foundation
internal import GRDB
import R2UpModel

extension Store {
    /// What a sync needs to know of the tracks at these paths, in their order (nil: none):
    /// a watch's batch looks up its few files instead of walking every track.
    package func syncStates(at paths: [String]) throws(StoreError) -> [SyncTrackState?] {
        guard !paths.isEmpty else { return [] }
        return try read { db in
            let statement = try db.makeStatement(
                sql: #"SELECT size, mtimeNs, uploadState, bucket, "key" FROM tracks WHERE path = ?"#)
            return try paths.map { path in
                guard let row = try Row.fetchOne(statement, arguments: [path]) else { return nil }
                return SyncTrackState(
                    size: row[0], mtimeNs: row[1], uploadState: UploadState(rawValue: row[2]) ?? .none, bucket: row[3],
                    key: row[4])
            }
        }
    }
}
