import Foundation
import Synchronization
package import R2UpModel

/// What the watcher saw since it was last asked, merged: each path once.
package struct WatchChanges: Sendable, Equatable {
    /// Files closed after writing or moved in, with when that last happened.
    package var files: [ExactPath: ContinuousClock.Instant] = [:]
    /// Folders created or moved in (now watched): every file under them is looked at.
    package var folders: Set<String> = []
    /// The kernel's event queue overflowed, or a watched root moved: look at everything.
    package var everything = false
    /// Folders that cannot be watched (watch limit, permissions): rescanned on a timer.
    package var unwatched: Set<String> = []
    /// Folders watched now that could not be before (made readable): off the timer.
    package var rewatched: Set<String> = []
    /// One line each for the user (the watch limit, a root gone).
    package var notices: [String] = []
}

#if os(Linux)
/// inotify on every folder under some roots, read on a thread of its own (never the transfer
/// thread; it touches no store), so the kernel's queue is drained while uploads run.
package final class FolderWatcher: Sendable {
    private struct State {
        var folders: [Int32: String] = [:]
        var inbox = WatchChanges()
        var stopped = false
        var limitNoticed = false
        /// Watched folders that were made unreadable (chmod): their files are taken once they can be read.
        var unreadable: Set<String> = []
        /// Folders that could not be watched (permissions, the watch limit): rescanned on the timer.
        var unwatchable: Set<String> = []
    }

    static let folderMask: UInt32 =
        UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_CREATE)
        | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ATTRIB) | UInt32(IN_ONLYDIR)

    private let descriptor: Int32
    private let roots: [String]
    private let skipHidden: Bool
    private let followSymlinks: Bool
    private let state = Mutex(State())
    private let finished = Mutex(false)

    /// Opens an inotify instance; watches nothing until `start`.
    package init(roots: [String], skipHidden: Bool, followSymlinks: Bool) throws(WatchError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .inotify(String(cString: strerror(errno))) }
        descriptor = fd
        self.roots = roots
        self.skipHidden = skipHidden
        self.followSymlinks = followSymlinks
    }

    deinit { close(descriptor) }

    /// Watches every folder under the roots and starts reading events.
    /// - Returns: how many folders are watched.
    @discardableResult
    package func start() -> Int {
        for root in roots { addTree(root) }
        let thread = Thread { [self] in readLoop() }
        thread.name = "r2up-inotify"
        thread.start()
        return state.withLock { $0.folders.count }
    }

    /// Ends the reading thread (within a quarter of a second).
    package func stop() {
        state.withLock { $0.stopped = true }
        while !finished.withLock({ $0 }) { usleep(10_000) }
    }

    /// Folders watched now.

    /// What happened since the last call.
    package func take() -> WatchChanges {
        state.withLock { state in
            defer { state.inbox = WatchChanges() }
            return state.inbox
        }
    }

    private func readLoop() {
        defer { finished.withLock { $0 = true } }
        // Room for hundreds of events per read; inotify never splits one across reads.
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !state.withLock({ $0.stopped }) {
            poller.revents = 0
            let ready = poll(&poller, 1, 250)
            if ready <= 0 { continue }
            while true {
                let count = read(descriptor, buffer.baseAddress, capacity)
                guard count > 0 else { break }
                let now = ContinuousClock.now
                for event in InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                    handle(event, at: now)
                }
            }
        }
    }

    private func handle(_ event: InotifyEvent, at now: ContinuousClock.Instant) {
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
            state.withLock {
                if !$0.inbox.everything {
                    $0.inbox.notices.append(
                        "too many changes at once (the inotify queue overflowed); looking at every file again "
                            + "(`sysctl fs.inotify.max_queued_events` sets the queue's size)")
                }
                $0.inbox.everything = true
            }
            return
        }
        guard let folder = state.withLock({ $0.folders[event.descriptor] }) else { return }
        if event.mask & UInt32(IN_IGNORED) != 0 {
            state.withLock { _ = $0.folders.removeValue(forKey: event.descriptor) }
            return
        }
        if event.mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 {
            if roots.contains(folder) {
                let what = event.mask & UInt32(IN_DELETE_SELF) != 0 ? "was deleted" : "was moved"
                state.withLock {
                    $0.inbox.notices.append("\(folder) \(what); nothing more is taken from it until it is back and \(Remedy.watchRestarts)")
                    $0.inbox.everything = true
                }
            }
            return
        }
        if event.mask & UInt32(IN_ATTRIB) != 0 && event.name == nil && event.rawName == nil {
            permissionsMayHaveChanged(folder)
            return
        }
        guard let name = event.name else {
            // A name that is not UTF-8: a full pass reports it as sync does.
            if event.rawName != nil { state.withLock { $0.inbox.everything = true } }
            return
        }
        if skipHidden && name.hasPrefix(".") { return }
        let path = folder == "/" ? "/" + name : folder + "/" + name
        let isFolder = event.mask & UInt32(IN_ISDIR) != 0
        if isFolder {
            if event.mask & UInt32(IN_MOVED_FROM) != 0 {
                forget(path)
            } else if event.mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                addTree(path)
                state.withLock { _ = $0.inbox.folders.insert(path) }
            } else if event.mask & UInt32(IN_ATTRIB) != 0 {
                permissionsMayHaveChanged(path)
            }
            return
        }
        if event.mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)) != 0 {
            state.withLock { $0.inbox.files[ExactPath(path)] = now }
        } else if followSymlinks && event.mask & UInt32(IN_CREATE) != 0 {
            // A symbolic link made in place: followed to a folder, it is watched like one.
            var info = stat()
            if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                addTree(path)
                state.withLock { _ = $0.inbox.folders.insert(path) }
            } else if lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK {
                state.withLock { $0.inbox.files[ExactPath(path)] = now }
            }
        }
    }

    /// A folder's attributes changed (chmod, chown, times). Made unreadable: one line, as files
    /// written in it cannot be taken. Readable again, or readable at last (it could not be
    /// watched at the start): watched anew (folders made meanwhile too) and looked at whole, so
    /// nothing written while it was closed is missed.
    private func permissionsMayHaveChanged(_ folder: String) {
        let readable = access(folder, R_OK | X_OK) == 0
        let reopened = state.withLock { state -> Bool in
            if readable { return state.unreadable.remove(folder) != nil || state.unwatchable.contains(folder) }
            if state.unreadable.insert(folder).inserted {
                state.inbox.notices.append("\(folder) cannot be read now; its files are taken once it can be")
            }
            return false
        }
        guard reopened else { return }
        addTree(folder)
        state.withLock { state in
            guard !state.unwatchable.contains(folder) else { return }  // still not watchable (the watch limit)
            state.inbox.folders.insert(folder)
            state.inbox.rewatched.insert(folder)
        }
    }

    /// A folder moved away: its watches (and its subfolders') would report under a stale path.
    private func forget(_ path: String) {
        let gone = state.withLock { state in
            let ids = state.folders.filter { $0.value == path || $0.value.hasPrefix(path + "/") }.map(\.key)
            for id in ids { state.folders.removeValue(forKey: id) }
            state.unreadable = state.unreadable.filter { $0 != path && !$0.hasPrefix(path + "/") }
            state.unwatchable = state.unwatchable.filter { $0 != path && !$0.hasPrefix(path + "/") }
            return ids
        }
        for id in gone { inotify_rm_watch(descriptor, id) }
    }

    /// Watches `top` and every folder under it. Folders that cannot be watched go to the
    /// inbox's `unwatched`, with one line for the watch limit.
    private func addTree(_ top: String) {
        var pending = [top]
        var seen = Set<FileID>()
        while let folder = pending.popLast() {
            var info = stat()
            guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
            guard seen.insert(FileID(info)).inserted else { continue }  // a followed link loop
            let id = inotify_add_watch(descriptor, folder, Self.folderMask)
            guard id >= 0 else {
                let failure = errno
                if failure == ENOENT || failure == ENOTDIR { continue }  // gone since it was listed
                unwatchable(folder, errno: failure)
                continue
            }
            state.withLock { state in
                state.folders[id] = folder
                state.unwatchable.remove(folder)
            }
            guard let handle = opendir(folder) else { continue }
            defer { closedir(handle) }
            let fd = dirfd(handle)
            while let entry = readdir(handle) {
                guard let name = FolderWatcher.name(of: entry) else { continue }
                if name == "." || name == ".." || (skipHidden && name.hasPrefix(".")) { continue }
                var child = stat()
                guard fstatat(fd, name, &child, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                let kind = child.st_mode & S_IFMT
                if kind == S_IFDIR || (kind == S_IFLNK && followSymlinks) {
                    pending.append(folder == "/" ? "/" + name : folder + "/" + name)
                }
            }
        }
    }

    private func unwatchable(_ folder: String, errno failure: Int32) {
        state.withLock { state in
            state.inbox.unwatched.insert(folder)
            state.unwatchable.insert(folder)
            if failure == ENOSPC {
                guard !state.limitNoticed else { return }
                state.limitNoticed = true
                state.inbox.notices.append(
                    "the inotify watch limit is reached (\(state.folders.count) folders watched); raise it with "
                        + "`sudo sysctl fs.inotify.max_user_watches=524288`; meanwhile the folders left out are rescanned every "
                        + "\(Int(WatchOptions.unwatchedRescan.components.seconds)) s")
            } else {
                state.inbox.notices.append(
                    "\(folder) cannot be watched (\(String(cString: strerror(failure)))); it is rescanned every "
                        + "\(Int(WatchOptions.unwatchedRescan.components.seconds)) s instead")
            }
        }
    }

    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String? {
        withUnsafePointer(to: &entry.pointee.d_name) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(validatingCString: $0) }
        }
    }
}
#else
/// Watching needs inotify, which only Linux has: elsewhere `init` throws and `watch` says so
/// (a scheduled `sync` does the same work there; docs/development/architecture.md).
package final class FolderWatcher: Sendable {
    package init(roots: [String], skipHidden: Bool, followSymlinks: Bool) throws(WatchError) {
        throw .inotify("this system has no inotify (watching folders needs Linux); run sync on a schedule instead")
    }

    package func start() -> Int { 0 }
    package func stop() {}
    package func take() -> WatchChanges { WatchChanges() }
}
#endif

/// A path that equals another only byte for byte: Swift's String == takes an NFD name for its
/// NFC twin, and on Linux those are two files.
package struct ExactPath: Hashable, Sendable {
    package let path: String

    package init(_ path: String) { self.path = path }

    package static func == (lhs: ExactPath, rhs: ExactPath) -> Bool { lhs.path.utf8.elementsEqual(rhs.path.utf8) }

    package func hash(into hasher: inout Hasher) {
        for byte in path.utf8 { hasher.combine(byte) }
    }
}

#if os(Linux)
/// One inotify event, read from the kernel's bytes with every length checked.
struct InotifyEvent: Equatable {
    var descriptor: Int32
    var mask: UInt32
    var cookie: UInt32
    /// The entry's name; nil for an event on the folder itself, or a name that is not UTF-8
    /// (then `rawName` is set).
    var name: String?
    var rawName: [UInt8]?

    /// wd, mask, cookie, len: four 32-bit fields, then `len` bytes of NUL-padded name.
    static let headerSize = 16

    /// The events in a buffer `read` filled; a truncated tail is dropped, never read past.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while bytes.count - offset >= headerSize {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            let start = offset + headerSize
            guard let nameLength = Int(exactly: length), nameLength <= bytes.count - start else { break }
            var event = InotifyEvent(descriptor: wd, mask: mask, cookie: cookie, name: nil, rawName: nil)
            if nameLength > 0 {
                let raw = bytes[start..<(start + nameLength)]
                let trimmed = Array(raw.prefix { $0 != 0 })
                if !trimmed.isEmpty {
                    if let text = String(validating: trimmed, as: UTF8.self) {
                        event.name = text
                    } else {
                        event.rawName = trimmed
                    }
                }
            }
            events.append(event)
            offset = start + nameLength
        }
        return events
    }
}
#endif

/// Why a watch cannot run at all.
package enum WatchError: Error, Sendable, Equatable, CustomStringConvertible {
    case inotify(String)
    /// Two folders given where one holds the other: their files would get two keys.
    case overlapping(String, String)

    package var description: String {
        switch self {
        case .overlapping(let one, let other):
            "\(one) and \(other) overlap (one holds the other); give each folder once"
        case .inotify(let reason):
            "cannot start inotify: \(reason); if it says too many open files, raise `sysctl fs.inotify.max_user_instances`"
        }
    }

    package var diagnosis: Diagnosis {
        switch self {
        case .inotify: Diagnosis(category: .configuration, message: description)
        case .overlapping: Diagnosis(category: .badInput, message: description)
        }
    }
}
