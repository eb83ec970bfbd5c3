package import Foundation
package import R2UpStore

/// What `queue --watch` reads each tick: the queue's report from the read-only store, opened
/// again when the database file is replaced on disk (restored, moved in).
package struct QueueWatchSource {
    /// One tick's reading.
    package enum Reading {
        case report(QueueReport)
        /// A writer held the database past the busy timeout: keep the last report, try next tick.
        case busy
    }

    /// The database file is no longer at its path (deleted or moved): nothing left to watch.
    package struct Gone: Error {
        package var path: String
    }

    package let path: String
    private var store: LocalStore
    private var inode: UInt?

    /// The database at `path`, or nil when none exists (nothing was ever queued there).
    package init?(path: String) throws(StoreError) {
        guard let store = try LocalStore.openIfPresent(forReading: path) else { return nil }
        self.path = path
        self.store = store
        inode = Self.inode(path)
    }

    /// The queue now, from the database at the path now.
    package mutating func read(now: Date) throws -> Reading {
        guard let current = Self.inode(path) else { throw Gone(path: path) }
        do {
            if current != inode, let reopened = try LocalStore.openIfPresent(forReading: path) {
                store = reopened
                inode = current
            }
            return .report(try QueueReport(database: store, now: now))
        } catch .busy {
            return .busy
        }
    }

    private static func inode(_ path: String) -> UInt? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt(info.st_ino)
    }
}
