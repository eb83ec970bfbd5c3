import Foundation
import GRDB
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// Migration v11: tracks offloaded before v10 (no mark) are told apart by their files.
@Suite("Migration v11: tracks offloaded before v10")
struct OffloadMigrationTests {
    /// A v10 database as an offload before v10 left it: `rows` are (path, uploadState, device).
    static func v10Store(_ folder: ScratchFolder, _ rows: [(String, String, Int64?)]) throws -> String {
        let path = folder.file("r2up.sqlite")
        do {
            let store = try Store(path: path)
            try store.rawWrite { db in
                try db.insertOldTracks(rows.map { OldTrackRow(path: $0.0, uploadState: $0.1, device: $0.2) })
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v11-offloaded-before-v10'")
            }
        }
        return path
    }

    @Test("an uploaded track whose file is gone is marked offloaded; one on disk, one never uploaded, one on a volume not mounted are not")
    func marks() throws {
        let folder = try ScratchFolder()
        let library = folder.file("lib")
        try FileManager.default.createDirectory(atPath: library + "/album", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: library + "/album/kept.m4a", contents: Data("kept.m".utf8))
        var info = stat()
        stat(library, &info)
        let device = Int64(truncatingIfNeeded: info.st_dev)
        let path = try Self.v10Store(folder, [
            (library + "/album/kept.m4a", "uploaded", device),
            (library + "/album/offloaded.m4a", "uploaded", device),
            // Its album folder removed since: the nearest folder there is on its device.
            (library + "/gone-album/offloaded.m4a", "uploaded", device),
            (library + "/album/no-device.m4a", "uploaded", nil),
            (library + "/album/pulled.m4a", "none", device),
            // Its nearest folder on another device: a volume not mounted, nothing known.
            (library + "/album/unmounted.m4a", "uploaded", device &+ 1),
        ])
        let store = try Store(path: path)
        #expect(try store.appliedMigrations().contains("v11-offloaded-before-v10"))
        #expect(try store.offloadedPaths(under: library, bucket: "tracks") == [
            library + "/album/offloaded.m4a", library + "/gone-album/offloaded.m4a", library + "/album/no-device.m4a",
        ])
        // A fetch clears the mark as before.
        _ = FileManager.default.createFile(atPath: library + "/album/offloaded.m4a", contents: Data("offl.m".utf8))
        try store.finishDownload(
            path: library + "/album/offloaded.m4a", size: 6, mtimeNs: 2, cloud: CloudCopy(bucket: "tracks", key: "k/1", etag: "\"e1\""))
        #expect(try store.offloadedPaths(under: library, bucket: "tracks").count == 2)
    }

    @Test("a new database runs v11 over no rows; a reopened one does not run it again")
    func once() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        #expect(try store.appliedMigrations().suffix(3) == ["v10-offloaded", "v11-offloaded-before-v10", "v12-pulled-offloaded-before-v10"])
        #expect(Schema.isGoneOnItsDevice(path: folder.file("nothing/here.m4a"), device: nil))
        #expect(!Schema.isGoneOnItsDevice(path: folder.file("r2up.sqlite"), device: nil))
    }
}
