import Foundation
package import R2UpStore

/// `rm`'s guard for offloaded tracks: an object that is the only copy of a track whose file is
/// gone (cloud only, ☁) is not deleted unless asked with `--force`.
package enum RemoveGuard {
    /// An object whose deletion would lose a track: no file of any track that holds it is on disk.
    package struct OnlyCopy: Sendable, Equatable {
        /// The object's key.
        package var key: String
        /// The track's path (the first, when several tracks name the key).
        package var path: String
    }

    /// The keys among `keys` that are the only copy of a cloud-only track, in the order given.
    package static func onlyCopies(of keys: [String], bucket: String, database: LocalStore) throws(StoreError) -> [OnlyCopy] {
        try onlyCopies(of: keys, bucket: bucket, store: database.store)
    }

    /// The keys among `keys` that are the only copy of a cloud-only track, in the order given.
    package static func onlyCopies(of keys: [String], bucket: String, store: Store) throws(StoreError) -> [OnlyCopy] {
        let holders = try store.trackPaths(bucket: bucket, keys: keys)
        var seen: Set<String> = []
        return keys.compactMap { key -> OnlyCopy? in
            guard let paths = holders[key], let first = paths.first, seen.insert(key).inserted else { return nil }
            // A track whose file is here keeps the bytes; a file that cannot be examined is kept too.
            let anyLocal = paths.contains { path in
                var info = stat()
                return lstat(path, &info) == 0 || (errno != ENOENT && errno != ENOTDIR)
            }
            return anyLocal ? nil : OnlyCopy(key: key, path: first)
        }
    }
}
