import Foundation
import GRDB
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// Migration v12: tracks a pull made and an offload removed before v10 (no mark) are told apart by
/// the download state an offload left (none) or a failed fetch after it (error, with the file's
/// mtime of its download), so `retry` fetches them against what was recorded.
@Suite("Migration v12: pulled tracks offloaded before v10")
struct PulledOffloadMigrationTests {
    struct Row {
        var name: String
        var uploadState = "none"
        var downloadState: String
        var mtimeNs: Int64 = 1_700_000_000_000_000_000
        var otherDevice = false
    }

    /// A v11 database holding `rows` under `library`, v12 not run yet.
    static func v11Store(_ folder: ScratchFolder, library: String, _ rows: [Row]) throws -> String {
        var info = stat()
        stat(library, &info)
        let device = Int64(truncatingIfNeeded: info.st_dev)
        let path = folder.file("r2up.sqlite")
        let store = try Store(path: path)
        try store.rawWrite { db in
            try db.insertOldTracks(
                rows.map {
                    OldTrackRow(
                        path: library + "/" + $0.name, uploadState: $0.uploadState, downloadState: $0.downloadState,
                        mtimeNs: $0.mtimeNs, device: $0.otherDevice ? device &+ 1 : device)
                })
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v12-pulled-offloaded-before-v10'")
        }
        return path
    }

    @Test("a pulled track whose file is gone, as an offload left it or a failed fetch after it, is marked; the others are not")
    func marks() throws {
        let folder = try ScratchFolder()
        let library = folder.file("lib")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: library + "/on-disk.m4a", contents: Data("on-dis".utf8))
        let path = try Self.v11Store(folder, library: library, [
            Row(name: "offloaded.m4a", downloadState: "none"),
            Row(name: "fetch-failed.m4a", downloadState: "error"),
            Row(name: "on-disk.m4a", downloadState: "none"),
            // Deleted by hand after its pull: the row still says downloaded.
            Row(name: "deleted.m4a", downloadState: "downloaded"),
            // A pull that failed before any file was there: its row never had a file's mtime.
            Row(name: "pull-failed.m4a", downloadState: "error", mtimeNs: 0),
            Row(name: "unmounted.m4a", downloadState: "none", otherDevice: true),
            // Uploaded tracks are v11's; one uploading is a job's, not an offload's.
            Row(name: "uploading.m4a", uploadState: "uploading", downloadState: "none"),
        ])
        let store = try Store(path: path)
        #expect(try store.appliedMigrations().contains("v12-pulled-offloaded-before-v10"))
        #expect(try store.offloadedPaths(under: library, bucket: "tracks") == [library + "/offloaded.m4a", library + "/fetch-failed.m4a"])
        // The failed fetch is now a fetch's to retry, against its recorded key and ETag.
        #expect(try store.failedFetches(bucket: "tracks").map(\.track.path) == [library + "/fetch-failed.m4a"])
        #expect(try store.failedFetches(bucket: "tracks").first?.track.etag == "\"e1\"")
    }

    @Test("a new database runs v12 over no rows; a reopened one does not run it again")
    func once() throws {
        let folder = try ScratchFolder()
        let library = folder.file("lib")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let path = try Self.v11Store(folder, library: library, [])
        #expect(try Store(path: path).appliedMigrations().last == "v12-pulled-offloaded-before-v10")
        // Reopened with a row that v12 would mark: it is not run again.
        let store = try Store(path: path)
        try store.rawWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO tracks (path, size, mtimeNs, downloadState, bucket, "key", etag, updatedAt)
                    VALUES (?, 6, 1, 'none', 'tracks', 'k', '"e"', '2026-11-27T10:00:00.000Z')
                    """, arguments: [library + "/later.m4a"])
        }
        #expect(try Store(path: path).offloadedPaths(under: library, bucket: "tracks").isEmpty)
    }
}
