public import Foundation
import GRDB

/// A database exactly as r2up's first schema ("v1") left it, with rows, written with raw
/// SQL so that it stays what v1 shipped even if the Swift side moves on.
public enum V1Database {
    public static let historyID = UUID(uuidString: "0E4E4C7A-8B3C-4D59-9B0F-6C1B2A3D4E5F")!
    public static let jobID = UUID(uuidString: "7D1C2B3A-4E5F-4A6B-8C7D-9E0F1A2B3C4D")!

    public static func make(at path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations (identifier) VALUES ('v1');
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
            try db.execute(
                sql: """
                    INSERT INTO history VALUES
                        (?, '01.flac', 31457280, 'album/01.flac', '2025-06-15 15:06:40.000',
                         'https://pub.example.com/album/01.flac', 'tracks', '"e1"'),
                        ('5A6B7C8D-1E2F-4A3B-9C4D-5E6F7A8B9C0D', '02.flac', 1024, 'album/02.flac',
                         '2025-06-15 15:10:00.000', 'https://pub.example.com/album/02.flac', 'tracks', NULL);
                    INSERT INTO tracks (path, size, mtimeNs, uploadState, downloadState, bucket, "key", etag, updatedAt)
                    VALUES ('/music/album/01.flac', 31457280, 1700000000000000000, 'uploaded', 'none', 'tracks',
                            'album/01.flac', '"e1"', '2025-06-15 15:06:40.000');
                    INSERT INTO jobs VALUES
                        (?, '/music/album/03.flac', 'tracks', 'album/03.flac', 'audio/flac', 20971520,
                         1700000000000000000, 'initiated', 'UPLOAD-1', 8388608, 1, NULL, NULL, 8388608,
                         '2025-06-15 15:00:00.000', '2025-06-15 15:05:00.000');
                    INSERT INTO parts VALUES (?, 1, 8388608, '"p1"', 'bWQ1'), (?, 2, 8388608, '"p2"', 'bWQ2');
                    """,
                arguments: [
                    historyID.uuidString, jobID.uuidString, jobID.uuidString, jobID.uuidString,
                ])
        }
    }
}
