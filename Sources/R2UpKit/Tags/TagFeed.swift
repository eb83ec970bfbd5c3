import Dispatch
import Foundation
import Synchronization
import R2UpModel
import R2UpTransfer

/// Tags read ahead of the uploads. `TagResolver.attributes` starts one for the files of a run:
/// it reads their tags in the order given, on a queue of its own, while the run is already
/// sending the first files; an upload asks for its file's metadata as it starts
/// (`attributes(_:for:)`) and waits only if TagLib has not reached that file yet. TagLib stays
/// behind its one lock and off the transfer thread; the transfer thread only looks up a result.
package final class TagFeed: Sendable, Equatable {
    private struct State {
        /// Metadata by absolute path, once read (no entry: no tags).
        var metadata: [String: [String: String]] = [:]
        var read: Set<String> = []
        var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
        var finished = false
        var waitingForAll: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    private let paths: Set<String>

    /// Starts reading the tags of `paths` (absolute) with `resolver`, as `x-amz-meta-*` under `user`.
    init(paths: [String], resolver: TagResolver, user: [String: String]) {
        self.paths = Set(paths)
        DispatchQueue(label: "r2up.tags", qos: .userInitiated).async { self.read(paths, resolver: resolver, user: user) }
    }

    private func read(_ paths: [String], resolver: TagResolver, user: [String: String]) {
        // What the store knows of these files, in one read rather than one per file.
        resolver.lookUp(paths)
        for path in paths {
            let metadata = resolver.tags(path: path).map { TagMetadata.merged(tags: $0, user: user) }
            let waiters = state.withLock { state in
                state.metadata[path] = metadata
                state.read.insert(path)
                return state.waiting.removeValue(forKey: path) ?? []
            }
            for waiter in waiters { waiter.resume() }
        }
        // Stored now, while the uploads go on (the run's end would otherwise wait for it).
        resolver.saveRead()
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waitingForAll = [] }
            return state.waitingForAll
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The attributes for one file: its tags as metadata when it has some, once they are read.
    func attributes(_ base: ObjectAttributes, for path: String) async -> ObjectAttributes {
        var attributes = base
        guard paths.contains(path) else { return attributes }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.read.contains(path) { return true }
                state.waiting[path, default: []].append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        if let metadata = state.withLock({ $0.metadata[path] }) { attributes.metadata = metadata }
        return attributes
    }

    /// Returns once every file's tags are read.
    func finished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.finished { return true }
                state.waitingForAll.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    package static func == (lhs: TagFeed, rhs: TagFeed) -> Bool { lhs === rhs }
}
