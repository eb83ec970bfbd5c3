import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpStore
import R2UpTestSupport

/// The folder walk on a real file system: names, hidden files, links and loops.
@Suite("Sync scanner")
struct SyncScannerTests {
    @Test("nested folders, spaces and an NFD name: relative paths in NFC; hidden files and links skipped")
    func tree() throws {
        let folder = try TestDirectory()
        try folder.makeFile("Artist One/Album (2026)/01 First Song.m4a", size: 3)
        try folder.makeFile("Cafe\u{301} del Mar.flac", size: 4)
        try folder.makeFile(".sync-tmp/partial.flac", size: 5)
        try folder.makeFile("Artist One/.DS_Store", size: 1)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link.flac", withDestinationPath: "Cafe\u{301} del Mar.flac")
        let scan = SyncScanner().scan(folder.path)
        #expect(scan.problems.isEmpty)
        #expect(scan.files.map(\.relativePath).sorted() == ["Artist One/Album (2026)/01 First Song.m4a", "Caf\u{E9} del Mar.flac"])
        let nfd = try #require(scan.files.first { $0.relativePath.hasPrefix("Caf") })
        #expect(nfd.path.hasSuffix("/Cafe\u{301} del Mar.flac"))
        #expect(Array(nfd.path.utf8).contains(0xCC))  // the path on disk keeps its NFD spelling
        #expect(FileManager.default.fileExists(atPath: nfd.path))
        #expect(nfd.size == 4)
    }

    @Test("files come in the byte order of their whole paths, the order SQLite keeps tracks in")
    func order() throws {
        let folder = try TestDirectory()
        let names = ["a/x.m4a", "a-b.m4a", "a.m4a", "B.m4a", "a/b/c.m4a", "ab.m4a", "a0.m4a", "Cafe\u{301}.m4a", "Caf\u{E9}.m4a"]
        for name in names { try folder.makeFile(name, size: 1) }
        let paths = SyncScanner().scan(folder.path).files.map { Array($0.path.utf8) }
        #expect(paths.count == names.count)  // the NFD name and its NFC twin are two files
        #expect(paths == paths.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test("the store is read beside the scan: each file finds its own track, an NFD name and its NFC twin apart")
    func lookupBesideScan() throws {
        let folder = try TestDirectory()
        let data = try TestDirectory()
        for name in ["Cafe\u{301}.m4a", "Caf\u{E9}.m4a", "a/x.m4a", "a-b.m4a", "z.m4a"] { try folder.makeFile(name, size: 1) }
        let store = try Store(path: data.path + "/r2up.sqlite")
        let all = SyncScanner().scan(folder.path).files
        // Bytes: String == would take the NFC twin for the NFD name.
        let wanted = [folder.path + "/Cafe\u{301}.m4a", folder.path + "/a/x.m4a"].map { Array($0.utf8) }
        let known = all.filter { wanted.contains(Array($0.path.utf8)) }
        #expect(known.count == 2)
        _ = try store.enqueue(known.map {
            UploadJob(path: $0.path, bucket: "b", key: $0.relativePath, contentType: "audio/mp4", length: $0.size, mtimeNs: $0.mtimeNs, createdAt: Date())
        })
        let found = try store.withSyncStates(under: folder.path) { tracks in
            var found: [String] = []
            _ = try SyncScanner().scan(folder.path) { file in
                if try tracks.state(at: file.path) != nil { found.append(file.path) }
            }
            return found
        }
        #expect(found.map { Array($0.utf8) } == known.map(\.path).map { Array($0.utf8) })
    }

    @Test("--follow-symlinks follows links to files and folders, and reports a loop instead of walking it forever")
    func links() throws {
        let folder = try TestDirectory()
        try folder.makeFile("real/track.flac", size: 2)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/alias", withDestinationPath: "real")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/real/up", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/dangling.flac", withDestinationPath: "nowhere")
        let scan = SyncScanner(followSymlinks: true).scan(folder.path)
        #expect(scan.files.map(\.relativePath).sorted() == ["alias/track.flac", "real/track.flac"])
        let loops = scan.problems.filter { $0.message.contains("symbolic link loop") }
        #expect(loops.count == 2)
        #expect(scan.problems.contains { $0.path.hasSuffix("/dangling.flac") })
        #expect(SyncScanner().scan(folder.path).files.map(\.relativePath) == ["real/track.flac"])
    }

    @Test("the lock: a second holder is refused with the first one's pid; released on close")
    func lock() async throws {
        let folder = try TestDirectory()
        let path = SyncLock.path(forDatabase: folder.path + "/r2up.sqlite")
        var first: SyncLock? = try SyncLock.acquire(path: path)
        #expect(throws: SyncError.locked(pid: getpid())) { try SyncLock.acquire(path: path) }
        #expect(SyncError.locked(pid: 42).description.hasPrefix("another r2up sync (pid 42) is running"))
        #expect(SyncError.locked(pid: 42).diagnosis.category == .locked)
        withExtendedLifetime(first) {}
        first = nil
        let second = try SyncLock.acquire(path: path)
        withExtendedLifetime(second) {}
    }
}
