import Foundation
internal import GRDB

/// The database schema as a list of migrations.
///
/// Rules (GRDB's Migrations guide): a migration is never edited once it has shipped;
/// a change is a new migration appended at the end. Migrations are plain SQL with
/// string names, so they do not drift when Swift types change. DESIGN §4 names the
/// tables in the plural (`tracks`, `jobs`, `parts`, `history`) and so does r2up.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: v1)
        migrator.registerMigration("v2", migrate: v2)
        migrator.registerMigration("v3-leases", migrate: v3Leases)
        migrator.registerMigration("v4-deletions", migrate: v4Deletions)
        migrator.registerMigration("v5-audio", migrate: v5Audio)
        migrator.registerMigration("v6-track-keys", migrate: v6TrackKeys)
        migrator.registerMigration("v7-track-moves", migrate: v7TrackMoves)
        migrator.registerMigration("v8-genre-compilation", migrate: v8GenreCompilation)
        migrator.registerMigration("v9-copy-sent", migrate: v9CopySent)
        migrator.registerMigration("v10-offloaded", migrate: v10Offloaded)
        migrator.registerMigration("v11-offloaded-before-v10", migrate: v11OffloadedBeforeV10)
        migrator.registerMigration("v12-pulled-offloaded-before-v10", migrate: v12PulledOffloadedBeforeV10)
        return migrator
    }

    /// The first schema: the four tables.
    private static func v1(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE tracks (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                path TEXT NOT NULL UNIQUE,
                size INTEGER NOT NULL,
                mtimeNs INTEGER NOT NULL,
                uploadState TEXT NOT NULL DEFAULT 'none',
                downloadState TEXT NOT NULL DEFAULT 'none',
                bucket TEXT,
                "key" TEXT,
                etag TEXT,
                lastError TEXT,
                updatedAt TEXT NOT NULL
            );
            CREATE TABLE jobs (
                id TEXT PRIMARY KEY NOT NULL,
                path TEXT NOT NULL,
                bucket TEXT NOT NULL,
                "key" TEXT NOT NULL,
                contentType TEXT NOT NULL,
                length INTEGER NOT NULL,
                mtimeNs INTEGER NOT NULL,
                state TEXT NOT NULL,
                uploadID TEXT,
                partSize INTEGER,
                attempts INTEGER NOT NULL DEFAULT 0,
                nextAttemptAt TEXT,
                lastError TEXT,
                bytesSent INTEGER NOT NULL DEFAULT 0,
                createdAt TEXT NOT NULL,
                updatedAt TEXT NOT NULL
            );
            CREATE INDEX jobs_on_state ON jobs(state);
            CREATE TABLE parts (
                jobID TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
                partNumber INTEGER NOT NULL,
                size INTEGER NOT NULL,
                etag TEXT NOT NULL,
                checksum TEXT,
                PRIMARY KEY (jobID, partNumber)
            ) WITHOUT ROWID;
            CREATE TABLE history (
                id TEXT PRIMARY KEY NOT NULL,
                fileName TEXT NOT NULL,
                fileSize INTEGER NOT NULL,
                r2Key TEXT NOT NULL,
                uploadDate TEXT NOT NULL,
                publicURL TEXT NOT NULL,
                bucket TEXT NOT NULL,
                etag TEXT
            );
            """)
    }

    /// Indexes for the history views and job lookups, and history made append-only.
    private static func v2(_ db: Database) throws {
        try db.execute(sql: """
            CREATE INDEX history_on_uploadDate ON history(uploadDate DESC);
            CREATE INDEX history_on_r2Key ON history(r2Key);
            CREATE INDEX history_on_fileName ON history(fileName);
            CREATE INDEX jobs_on_target ON jobs(path, bucket, "key");
            CREATE TRIGGER history_is_immutable BEFORE UPDATE ON history
            BEGIN
                SELECT RAISE(ABORT, 'history rows are immutable');
            END;
            """)
    }

    /// Job leases (who works on a job, DESIGN §5) and the multipart uploads r2up gave up on
    /// but could not abort yet: each run tries those again.
    private static func v3Leases(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE jobs ADD COLUMN ownerPID INTEGER;
            ALTER TABLE jobs ADD COLUMN ownerStartTime INTEGER;
            ALTER TABLE jobs ADD COLUMN heartbeatAt TEXT;
            CREATE INDEX jobs_on_owner ON jobs(ownerPID) WHERE ownerPID IS NOT NULL;
            CREATE TABLE abandonedUploads (
                bucket TEXT NOT NULL,
                "key" TEXT NOT NULL,
                uploadID TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                lastError TEXT,
                createdAt TEXT NOT NULL,
                PRIMARY KEY (bucket, "key", uploadID)
            ) WITHOUT ROWID;
            """)
    }

    /// `r2up rm`: objects deleted, so the (immutable) history rows can say so.
    private static func v4Deletions(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE deletions (
                bucket TEXT NOT NULL,
                "key" TEXT NOT NULL,
                deletedAt TEXT NOT NULL
            );
            CREATE INDEX deletions_on_target ON deletions(bucket, "key");
            """)
    }

    /// Audio tags on tracks (DESIGN §12), with the size and mtime of the file they were read
    /// from: tags are read again when the file changes. NULL `tagsSize`: never read.
    /// `catalog_objects`: what a HEAD told of each object `catalog publish` saw, kept while the
    /// object keeps its ETag, so a republish HEADs only new or changed objects.
    private static func v5Audio(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE tracks ADD COLUMN title TEXT;
            ALTER TABLE tracks ADD COLUMN artist TEXT;
            ALTER TABLE tracks ADD COLUMN albumArtist TEXT;
            ALTER TABLE tracks ADD COLUMN album TEXT;
            ALTER TABLE tracks ADD COLUMN year INTEGER;
            ALTER TABLE tracks ADD COLUMN trackNumber INTEGER;
            ALTER TABLE tracks ADD COLUMN discNumber INTEGER;
            ALTER TABLE tracks ADD COLUMN durationMs INTEGER;
            ALTER TABLE tracks ADD COLUMN bitrateKbps INTEGER;
            ALTER TABLE tracks ADD COLUMN sampleRate INTEGER;
            ALTER TABLE tracks ADD COLUMN channels INTEGER;
            ALTER TABLE tracks ADD COLUMN tagsSize INTEGER;
            ALTER TABLE tracks ADD COLUMN tagsMtimeNs INTEGER;
            CREATE TABLE catalog_objects (
                bucket TEXT NOT NULL,
                "key" TEXT NOT NULL,
                etag TEXT NOT NULL,
                size INTEGER NOT NULL,
                contentType TEXT,
                lastModified REAL,
                metadata TEXT NOT NULL,
                PRIMARY KEY (bucket, "key")
            ) WITHOUT ROWID;
            """)
    }

    /// Which track holds each key (issue 14): enqueue asks it for every file before sending,
    /// so an upload never replaces another track's object.
    private static func v6TrackKeys(_ db: Database) throws {
        try db.execute(sql: """
            CREATE INDEX tracks_on_key ON tracks(bucket, "key") WHERE "key" IS NOT NULL;
            """)
    }

    /// A track follows its file (issue 14, DESIGN §10): the device and inode its file had, and
    /// the content digest its upload computed (`ContentDigest`), to recognise it moved. A job
    /// may be a server-side copy of an object (`copySourceKey`), carrying the digest its track
    /// keeps; a history row made by a copy names the key it was copied from.
    private static func v7TrackMoves(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE tracks ADD COLUMN device INTEGER;
            ALTER TABLE tracks ADD COLUMN inode INTEGER;
            ALTER TABLE tracks ADD COLUMN digest TEXT;
            ALTER TABLE jobs ADD COLUMN copySourceKey TEXT;
            ALTER TABLE jobs ADD COLUMN copySourceETag TEXT;
            ALTER TABLE jobs ADD COLUMN digest TEXT;
            ALTER TABLE history ADD COLUMN copiedFrom TEXT;
            """)
    }

    /// Genre and the compilation flag on tracks. Tags read before had neither: marked unread
    /// (`tagsSize` NULL), so the next run reads them again.
    private static func v8GenreCompilation(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE tracks ADD COLUMN genre TEXT;
            ALTER TABLE tracks ADD COLUMN compilation INTEGER;
            UPDATE tracks SET tagsSize = NULL, tagsMtimeNs = NULL WHERE tagsSize IS NOT NULL;
            """)
    }

    /// The mark that a job's server-side copy went out to its then empty key (size and ETag of
    /// the source), kept over runs: a later run knows the object it finds there as that copy.
    private static func v9CopySent(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE jobs ADD COLUMN copySentSize INTEGER;
            ALTER TABLE jobs ADD COLUMN copySentETag TEXT;
            """)
    }

    /// The ETag of the cloud copy an offload left as a track's only copy: a file gone on purpose,
    /// which `sync --delete` and `watch --delete` must not take for a file deleted by hand.
    private static func v10Offloaded(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE tracks ADD COLUMN offloadedETag TEXT")
    }

    /// Tracks an offload removed before v10 carry no mark: their rows read as files deleted by
    /// hand (uploaded, file gone), and `sync --delete` would delete their only copy. Nothing an
    /// offload wrote then tells them apart (it cleared the download state and error, as a track
    /// never downloaded has them), so the files are asked: an uploaded track whose file is gone
    /// while the folders above it are there, on the device the file was on, is marked offloaded.
    /// A file deleted by hand before this upgrade is marked too: its object is kept (`rm` deletes
    /// it), never an only copy lost. A volume not mounted (the nearest folder there on another
    /// device) is left unmarked, so its files deleted by hand later are still mirrored.
    private static func v11OffloadedBeforeV10(_ db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, path, device FROM tracks
                WHERE uploadState = 'uploaded' AND "key" IS NOT NULL AND etag IS NOT NULL AND offloadedETag IS NULL
                """)
        let mark = try db.makeStatement(sql: "UPDATE tracks SET offloadedETag = etag WHERE id = ?")
        for row in rows where isGoneOnItsDevice(path: row["path"], device: row["device"]) {
            try mark.execute(arguments: [row["id"] as Int64])
        }
    }

    /// v11 for tracks a pull made (never uploaded) that an offload removed before v10: without a
    /// mark a failed fetch of one was retried as a pull, taking whatever object is at its key now.
    /// Such a row is told by its download state: none is what an offload left (a pull leaves
    /// downloaded, downloading or error), error a failed fetch after it, the file's mtime of its
    /// download still there (a pull that failed before any file was made has none). Its file must
    /// be gone on its device, as in v11. Marked, it is retried as a fetch, against its key and ETag.
    /// (An uploaded track edited since, then deleted by hand, reads the same and is marked too:
    /// a fetch of it checks the object against the ETag recorded, as `fetch` does.)
    private static func v12PulledOffloadedBeforeV10(_ db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, path, device FROM tracks
                WHERE uploadState NOT IN ('uploaded', 'uploading') AND downloadState IN ('none', 'error') AND mtimeNs != 0
                AND "key" IS NOT NULL AND etag IS NOT NULL AND offloadedETag IS NULL
                """)
        let mark = try db.makeStatement(sql: "UPDATE tracks SET offloadedETag = etag WHERE id = ?")
        for row in rows where isGoneOnItsDevice(path: row["path"], device: row["device"]) {
            try mark.execute(arguments: [row["id"] as Int64])
        }
    }

    /// Whether nothing is at `path` while the nearest folder above it that exists is on `device`
    /// (any device when none was recorded).
    static func isGoneOnItsDevice(path: String, device: Int64?) -> Bool {
        var info = stat()
        guard lstat(path, &info) != 0, errno == ENOENT || errno == ENOTDIR else { return false }
        var folder = (path as NSString).deletingLastPathComponent
        while stat(folder, &info) != 0 {
            guard errno == ENOENT || errno == ENOTDIR, folder != "/", !folder.isEmpty else { return false }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return device.map { Int64(truncatingIfNeeded: info.st_dev) == $0 } ?? true
    }
}
