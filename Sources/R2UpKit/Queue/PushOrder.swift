import Foundation
package import R2UpStore

/// The order `push` prints its URLs in: an album as it plays, whatever order the uploads
/// finished in — by folder, then disc, track number (tags as stored), then name.
package enum PushOrder {
    /// `items` sorted by the track at each one's `path`; tags the store lacks sort by name.
    package static func sorted<T>(_ items: [T], path: (T) -> String, store: Store) -> [T] {
        let paths = items.map(path)
        let tags = (try? store.storedTags(paths: paths)) ?? [:]
        let ranks = paths.map { path -> Rank in
            let cut = path.lastIndex(of: "/") ?? path.startIndex
            let name = cut == path.endIndex ? path[...] : path[path.index(after: cut)...]
            let found = tags[path]?.tags
            return Rank(folder: path[..<cut], disc: found?.disc ?? 1, track: found?.track ?? Int.max, name: name)
        }
        let order = ranks.indices.sorted { i, j in
            let (a, b) = (ranks[i], ranks[j])
            if a.folder != b.folder { return a.folder.utf8.lexicographicallyPrecedes(b.folder.utf8) }
            if a.disc != b.disc { return a.disc < b.disc }
            if a.track != b.track { return a.track < b.track }
            return a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }
        return order.map { items[$0] }
    }

    private struct Rank {
        var folder: Substring
        var disc: Int
        var track: Int
        var name: Substring
    }
}
