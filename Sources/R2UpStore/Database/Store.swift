public import Foundation
package import GRDB

/// r2up's durable state: tracks, the upload queue, finished parts and the upload history,
/// in one SQLite database (DESIGN §4).
///
/// The database is a WAL-mode `DatabasePool`, so `r2up status` can read while a cron
/// `sync` writes, and two processes can write: every write is one IMMEDIATE transaction
/// and waits up to the busy timeout for the other instead of failing with
/// "database is locked". Every method is synchronous and throws only `StoreError`.
public final class Store: Sendable {
    /// The database file.
    public let path: String
    package let pool: DatabasePool
    /// The clock for `updatedAt` and friends; injected so tests can pin it.
    package let now: @Sendable () -> Date

    /// Opens (creating if needed) the database at `path` and upgrades its schema in place.
    ///
    /// A missing parent folder is created with mode 0700 and a new database file with
    /// mode 0600. A damaged file, an SQLite file r2up did not make, and a database that
    /// a newer r2up has upgraded are refused, never overwritten.
    /// - Parameters:
    ///   - path: the database file.
    ///   - busyTimeout: how long a write waits for another process's write.
    ///   - now: the clock.
    public init(
        path: String, busyTimeout: TimeInterval = 10, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StoreError) {
        self.path = path
        self.now = now
        try Self.prepareFile(at: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "r2up"
        // WAL with synchronous=NORMAL: a commit survives a killed process (what the crash tests
        // prove); only a power cut may lose the last few, never corrupt the file. FULL would
        // fsync on every job step, the store's main cost when pushing thousands of small files.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        // Opening a new file while another process does too can meet SQLITE_BUSY that SQLite
        // returns at once, without its busy handler (the switch to WAL, a read that must turn
        // into a write): such an answer means "start again", so opening retries until the timeout.
        let deadline = Date().addingTimeInterval(busyTimeout)
        var pause: useconds_t = 2_000
        func retryable(_ error: StoreError) -> Bool {
            if case .busy = error, Date() < deadline { return true }
            return false
        }
        var opened: DatabasePool?
        while opened == nil {
            do {
                opened = try DatabasePool(path: path, configuration: configuration)
            } catch {
                let wrapped = StoreError.wrap(error, path: path)
                guard retryable(wrapped) else { throw wrapped }
                usleep(pause)
                pause = min(pause * 2, 100_000)
            }
        }
        guard let opened else { throw .busy(path: path) }
        pool = opened
        while true {
            do {
                try migrate()
                return
            } catch {
                guard retryable(error) else { throw error }
                usleep(pause)
                pause = min(pause * 2, 100_000)
            }
        }
    }

    /// Closes the idle read connections and empties the writer's page cache (GRDB's
    /// `releaseMemory`): what a long-running reader such as `r2up serve` no longer needs after a
    /// burst of reads. Waits for the reads under way; the next read opens a connection again.
    package func releaseMemory() { pool.releaseMemory() }

    /// The rule of the read-only commands (history, status, queue, copy-url): the database at
    /// `path`, or nil when its file does not exist yet. Reading never creates the database
    /// (nor its folder); an absent one is an empty store.
    public static func openIfPresent(forReading path: String) throws(StoreError) -> Store? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try openForReading(path)
    }

    /// Opens an existing database for reading only (history, status, queue, copy-url): SQLite
    /// opens it read-only, so a read never waits for another process's write (`queue --watch`
    /// during a push). Where the file and its folder can be written, a new database or one an
    /// older r2up made is opened to upgrade it instead; where they cannot, no write is tried and
    /// a schema older than this r2up's is a clear error rather than a failed migration.
    public static func openForReading(_ path: String, now: @escaping @Sendable () -> Date = { Date() }) throws(StoreError) -> Store {
        let folder = (path as NSString).deletingLastPathComponent
        let writable = access(path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
        guard access(path, R_OK) == 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        try refuseFolder(path)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "r2up"
        // A WAL read can still meet a moment's lock (the writer resetting the WAL): wait as a write would.
        configuration.busyMode = .timeout(10)
        // WAL needs a -shm file beside the database (SQLite makes it where the folder is writable);
        // when none is there and none can be made, SQLite reads the file as immutable (no writer
        // can be at work in a folder nobody may write).
        let uriPath = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        let shared = writable || FileManager.default.fileExists(atPath: path + "-shm")
        let uri = "file:\(uriPath)?" + (shared ? "mode=ro" : "immutable=1")
        let store: Store
        do {
            store = Store(path: path, pool: try DatabasePool(path: uri, configuration: configuration), now: now)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        let migrator = Schema.migrator
        let (tables, applied) = try store.read { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            return (tables, tables.contains("grdb_migrations") ? try migrator.appliedIdentifiers(db) : [])
        }
        let known = Set(migrator.migrations)
        if writable && (tables.isEmpty || (tables.contains("grdb_migrations") && applied != known && applied.isSubset(of: known))) {
            return try Store(path: path, now: now)
        }
        guard tables.contains("grdb_migrations") else { throw .foreignDatabase(path: path) }
        guard applied.isSubset(of: known) else {
            throw .newerVersion(path: path, unknownMigrations: applied.subtracting(known).sorted())
        }
        guard applied == known else { throw .readOnlyNeedsUpgrade(path: path) }
        return store
    }

    private init(path: String, pool: DatabasePool, now: @escaping @Sendable () -> Date) {
        self.path = path
        self.pool = pool
        self.now = now
    }

    /// The identifiers of the migrations applied to this database, in order.
    public func appliedMigrations() throws(StoreError) -> [String] {
        try read { db in try Schema.migrator.appliedMigrations(db) }
    }

    // MARK: - Opening

    /// A folder given as the database (`--db ~/Music`): SQLite would only say "disk I/O
    /// error" or "unable to open database file", naming nothing.
    private static func refuseFolder(_ path: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .cannotOpen(path: path, reason: "it is a folder, not a database file")
        }
    }

    private static func prepareFile(at path: String) throws(StoreError) {
        try refuseFolder(path)
        let manager = FileManager.default
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            var isDirectory: ObjCBool = false
            if manager.fileExists(atPath: folder, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else {
                    throw .cannotCreateDirectory(path: folder, reason: "a file is in the way")
                }
            } else {
                do {
                    // The history names every file uploaded: keep it to its owner.
                    try manager.createDirectory(
                        atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    throw .cannotCreateDirectory(path: folder, reason: Self.reason(error))
                }
            }
        }
        if !manager.fileExists(atPath: path) {
            // SQLite takes an empty file as a new database; creating it here sets its mode.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 {
                close(fd)
            } else if errno == EACCES || errno == EROFS || errno == EPERM {
                throw .readOnly(path: path)
            } else if errno != EEXIST {
                throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
            }
        }
        // WAL needs to create `-wal` and `-shm` beside the file, so the folder must be writable too.
        if access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            throw .readOnly(path: path)
        }
    }

    private func migrate() throws(StoreError) {
        let migrator = Schema.migrator
        let (tables, applied) = try read { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            return (tables, try migrator.appliedIdentifiers(db))
        }
        if !tables.isEmpty && !tables.contains("grdb_migrations") {
            throw .foreignDatabase(path: path)
        }
        let known = Set(try read { db in try migrator.appliedMigrations(db) })
        let unknown = applied.subtracting(known)
        guard unknown.isEmpty else {
            throw .newerVersion(path: path, unknownMigrations: unknown.sorted())
        }
        // Two processes opening a new database at once may both try a migration; the
        // loser's fails once its rival's has committed, and a second pass finds it done.
        var lastError: StoreError?
        for _ in 0..<3 {
            do {
                try migrator.migrate(pool)
                return
            } catch {
                lastError = StoreError.wrap(error, path: path)
                let done = (try? pool.read { db in try migrator.hasCompletedMigrations(db) }) ?? false
                if done { return }
            }
        }
        if let lastError { throw lastError }
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return (error as NSError).localizedDescription
    }

    // MARK: - Transactions

    /// Runs `body` in one read transaction (a consistent snapshot).
    package func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// Runs `body` in one IMMEDIATE write transaction: all of it lands, or none.
    package func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.write(body)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }
}
