import Foundation
import Synchronization
import R2UpAudio
package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// Tags for files about to be queued: the stored ones while the file keeps the size and mtime
/// they were read from, else read now with TagLib (and saved by `save`). Reading happens on the
/// caller's task before the queue runs, never on the transfer thread.
package final class TagResolver: Sendable {
    private struct State {
        var stored: [String: StoredTags]
        var fresh: [(path: String, stored: StoredTags)] = []
        /// Folders whose stored tags are all loaded: no lookup for a path under them (sync
        /// resolves inside the store's read of its tracks, which must not be re-entered).
        var preloaded: [String] = []
        /// Paths looked up in the store already (found or not): no second lookup.
        var lookedUp: Set<String> = []
        /// Reads started by `attributes`: `save` waits for them.
        var feeds: [TagFeed] = []
    }
    private let state: Mutex<State>
    private let store: Store?

    /// - Parameter store: where tags read before are looked up (nil: read every file).
    package init(store: Store?) {
        self.store = store
        state = Mutex(State(stored: [:]))
    }

    /// Loads the stored tags of every track under a folder in one query (push DIR, sync).
    package func preload(under folder: String) throws(StoreError) {
        guard let store else { return }
        var root = FilePath.absolute(folder)
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        let stored = try store.storedTags(under: root)
        state.withLock {
            $0.stored.merge(stored) { _, new in new }
            $0.preloaded.append(root == "/" ? "" : root)
        }
    }

    /// The tags of the file at an absolute path with this size and mtime; nil when it is not
    /// audio or has no readable tags.
    package func tags(path: String, size: Int64, mtimeNs: Int64) -> AudioTags? {
        guard AudioTagReader.isAudio(path) else { return nil }
        // The lock is held for lookups only: the store query and TagLib's read happen outside it.
        let (cached, lookUp) = state.withLock { state in (state.stored[path], Self.mustLookUp(path, in: state)) }
        var known = cached
        if known == nil, lookUp, let store, let row = try? store.storedTags(paths: [path])[path] {
            known = row
            state.withLock { $0.stored[path] = row }
        }
        if let known, known.size == size, known.mtimeNs == mtimeNs { return known.tags }
        // A file r2up may not read has unknown tags, not none: nothing is kept (a chmod changes
        // neither size nor mtime, and the next read must try again), and no track is made for it.
        guard access(path, R_OK) == 0 else { return nil }
        let entry = StoredTags(size: size, mtimeNs: mtimeNs, tags: AudioTagReader.read(path: path))
        state.withLock { state in
            state.stored[path] = entry
            state.fresh.append((path, entry))
        }
        return entry.tags
    }

    /// Loads the stored tags of these files (absolute paths) in one read, so the reads that
    /// follow look none of them up one by one. A store that cannot be read leaves them to those.
    func lookUp(_ paths: [String]) {
        guard let store else { return }
        let wanted = state.withLock { state in paths.filter { state.stored[$0] == nil && Self.mustLookUp($0, in: state) } }
        guard !wanted.isEmpty, let found = try? store.storedTags(paths: wanted) else { return }
        state.withLock { state in
            state.stored.merge(found) { old, _ in old }
            state.lookedUp.formUnion(wanted)
        }
    }

    /// Whether the store may know tags of `path` that were not loaded yet.
    private static func mustLookUp(_ path: String, in state: State) -> Bool {
        !state.lookedUp.contains(path) && !state.preloaded.contains(where: { path.hasPrefix($0 + "/") })
    }

    /// The tags of a file, given by any path (stat'ed here); nil when it cannot be read or is
    /// not a regular file (a FIFO pushed by name is refused, and leaves no track behind).
    package func tags(path: String) -> AudioTags? {
        guard AudioTagReader.isAudio(path) else { return nil }
        let absolute = FilePath.absolute(path)
        var info = stat()
        guard stat(absolute, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let mtime = info.mtimeNs
        return tags(path: absolute, size: Int64(info.st_size), mtimeNs: mtime)
    }

    /// Writes the tags read since the last save to the store, once the reads `attributes`
    /// started are done.
    package func save() async throws(StoreError) {
        let feeds = state.withLock { state in
            defer { state.feeds = [] }
            return state.feeds
        }
        for feed in feeds { await feed.finished() }
        guard let store else { return }
        let fresh = state.withLock { state in
            defer { state.fresh = [] }
            return state.fresh
        }
        // What a feed could not write during the run is in `fresh` again: written now, or this throws.
        try store.saveTags(fresh)
    }

    /// Writes the tags read so far, from the thread that read them (a feed that has read its
    /// last file): they land while the uploads go on instead of after them. What the store
    /// refuses now is left to `save`.
    func saveRead() {
        guard let store else { return }
        let fresh = state.withLock { state in
            defer { state.fresh = [] }
            return state.fresh
        }
        guard !fresh.isEmpty else { return }
        do { try store.saveTags(fresh) } catch {
            // Kept for `save`, which writes them after the run or reports why it cannot.
            state.withLock { $0.fresh = fresh + $0.fresh }
        }
    }

    /// The object attributes for these files: each one's tags as `x-amz-meta-*` under the
    /// user's `--meta` (which wins over a tag), within R2's metadata limit. Returns at once:
    /// the tags are read ahead of the uploads (`TagFeed`), and stored by `save`.
    package func attributes(_ base: ObjectAttributes, forPaths paths: [String]) -> RunAttributes {
        let audio = paths.filter(AudioTagReader.isAudio).map(FilePath.absolute)
        guard !audio.isEmpty else { return RunAttributes(base) }
        let feed = TagFeed(paths: audio, resolver: self, user: base.metadata)
        state.withLock { $0.feeds.append(feed) }
        return RunAttributes(base, tagFeed: feed)
    }
}
