import Foundation
import Testing

@testable import Uploader

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
        #expect(SyncError.locked(pid: 42).diagnosis.status == .locked)
        withExtendedLifetime(first) {}
        first = nil
        let second = try SyncLock.acquire(path: path)
        withExtendedLifetime(second) {}
    }
}
