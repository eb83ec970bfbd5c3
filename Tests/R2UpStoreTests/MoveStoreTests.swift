import Foundation
import Testing
import GRDB
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// `Store.enqueueMoves` (issue 14, item 4): the track follows its file in one transaction; a
/// move onto a third track's key changes nothing; a copy job round-trips its source.
@Suite("Store: moved tracks")
struct MoveStoreTests {
    /// An uploaded track at `path` holding `key` (its job completed as a run completes it).
    static func uploaded(_ store: Store, _ path: String, key: String, digest: String? = nil) throws {
        var job = Sample.job(path, key: key, length: 100)
        job.digest = digest
        try store.enqueue(job)
        _ = try store.completeJob(
            id: job.id, historyItem: Sample.item((path as NSString).lastPathComponent, key: key, size: 100, etag: "e-\(key)"))
    }

    static func move(from old: String, key oldKey: String, to new: String, key newKey: String) -> PlannedMove {
        PlannedMove(
            upload: PlannedUpload(
                file: ScannedFile(path: new, relativePath: newKey, size: 100, mtimeNs: 5, ctimeNs: 5, device: 1, inode: 42),
                key: newKey, reason: .new),
            track: VanishedTrack(
                path: old, size: 100, mtimeNs: 1_700_000_000_000_000_000, key: oldKey, etag: "e-\(oldKey)", device: 1, inode: 42,
                digest: "w:digest"))
    }

    @Test("the track takes the new path with its identity; a copy job carries the old key, its ETag and digest")
    func follows() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try Self.uploaded(store, "/m/old/a.flac", key: "old/a.flac", digest: "w:digest")
        let before = try #require(try store.track(path: "/m/old/a.flac"))
        #expect(try store.rawRead { db in try String.fetchOne(db, sql: "SELECT digest FROM tracks") } == "w:digest")

        let queued = try store.enqueueMoves(
            [Self.move(from: "/m/old/a.flac", key: "old/a.flac", to: "/m/new/a.flac", key: "new/a.flac")], bucket: "tracks",
            contentType: { _ in "audio/flac" })
        #expect(queued.jobs.count == 1 && queued.conflicts.isEmpty && queued.uploads.isEmpty)
        let job = try #require(queued.jobs.first)
        #expect(job.copySourceKey == "old/a.flac")
        #expect(job.copySourceETag == "e-old/a.flac")
        #expect(job.digest == "w:digest")
        #expect(job.isCopy)
        #expect(try store.job(id: job.id) == job)
        #expect(queued.conditions[job.id] == .some(.absent))
        #expect(try store.track(path: "/m/old/a.flac") == nil)
        let moved = try #require(try store.track(path: "/m/new/a.flac"))
        #expect(moved.id == before.id)
        #expect(moved.key == "old/a.flac")  // until the copy completes
        #expect(moved.uploadState == .uploaded)

        // Completed: the track holds the new key, the history row says it is a copy.
        let item = UploadItem(
            fileName: "a.flac", fileSize: 100, r2Key: "new/a.flac", uploadDate: Sample.date,
            publicURL: URL(string: "https://pub.example.com/new/a.flac")!, bucket: "tracks", etag: "e2", copiedFrom: "old/a.flac")
        _ = try store.completeJob(id: job.id, historyItem: item)
        #expect(try store.track(path: "/m/new/a.flac")?.key == "new/a.flac")
        let found = try store.upload(matching: "/m/new/a.flac")
        #expect(found?.r2Key == "new/a.flac")
        #expect(found?.copiedFrom == "old/a.flac")
        #expect(try store.rawRead { db in try String.fetchOne(db, sql: "SELECT digest FROM tracks") } == "w:digest")
    }

    @Test("a copy nobody makes, one that failed and one cancelled leave the track uploaded at the object it copies from")
    func copyLeavesTrackUploaded() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try Self.uploaded(store, "/m/a.flac", key: "old/a.flac")
        let queued = try store.enqueueMoves(
            [Self.move(from: "/m/a.flac", key: "old/a.flac", to: "/m/a.flac", key: "new/a.flac")], bucket: "tracks",
            contentType: { _ in "audio/flac" })
        let job = try #require(queued.jobs.first)
        #expect(try store.tracks(under: "/m").map(\.uploadState) == [.uploading])  // this run holds it
        try store.releaseLeases()
        let left = try #require(try store.tracks(under: "/m").first)
        #expect(left.uploadState == .uploaded && left.key == "old/a.flac" && left.pendingCopyKey == "new/a.flac")
        #expect(!left.interrupted)
        _ = try store.updateJob(id: job.id) { $0.state = .failedRetryable }
        #expect(try store.track(path: "/m/a.flac")?.uploadState == .uploaded)
        // Cancelled after a run that died mid-copy left its track uploading.
        try store.rawWrite { db in try db.execute(sql: "UPDATE tracks SET uploadState = 'uploading'") }
        #expect(try store.cancelJobs([job.id]).cancelled.count == 1)
        let cancelled = try #require(try store.track(path: "/m/a.flac"))
        #expect(cancelled.uploadState == .uploaded && cancelled.key == "old/a.flac")
    }

    @Test("a watch's batch reads only the gone tracks of its sizes, however many tracks outlived their files")
    func vanishedBySize() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let library = folder.file("lib")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        // 600 tracks whose files are gone (sizes 1,000 to 1,599), and one whose file is there.
        for index in 0..<600 {
            let path = library + "/gone \(index).flac"
            let job = Sample.job(path, key: "lib/gone \(index).flac", length: Int64(1_000 + index))
            try store.enqueue(job)
            _ = try store.completeJob(
                id: job.id, historyItem: Sample.item("gone \(index).flac", key: "lib/gone \(index).flac", size: Int64(1_000 + index)))
        }
        _ = FileManager.default.createFile(atPath: library + "/here.flac", contents: Data(count: 1_005))
        let here = Sample.job(library + "/here.flac", key: "lib/here.flac", length: 1_005)
        try store.enqueue(here)
        _ = try store.completeJob(id: here.id, historyItem: Sample.item("here.flac", key: "lib/here.flac", size: 1_005))

        let some = try store.vanishedTracks(under: library, bucket: "tracks", sizes: [1_005, 1_100, 99_999])
        #expect(some.map(\.path).sorted() == [library + "/gone 100.flac", library + "/gone 5.flac"])
        #expect(some.allSatisfy { $0.key.hasPrefix("lib/gone ") && $0.size >= 1_000 })
        // More sizes than one query takes (500 a query): every gone track, once.
        let every = try store.vanishedTracks(under: library, bucket: "tracks", sizes: Set((0..<700).map { Int64(1_000 + $0) }))
        #expect(every.count == 600 && Set(every.map(\.path)).count == 600)
        #expect(try store.vanishedTracks(under: library, bucket: "tracks").count == 600)
        #expect(try store.vanishedTracks(under: library, bucket: "tracks", sizes: []).isEmpty)
    }

    @Test("a move onto a key a third track holds: a conflict, and nothing written; the same key: the track just moves")
    func conflictAndSameKey() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try Self.uploaded(store, "/m/a.flac", key: "a.flac")
        try Self.uploaded(store, "/elsewhere/b.flac", key: "b.flac")
        let queued = try store.enqueueMoves(
            [Self.move(from: "/m/a.flac", key: "a.flac", to: "/m/b.flac", key: "b.flac")], bucket: "tracks",
            contentType: { _ in "audio/flac" })
        #expect(queued.jobs.isEmpty)
        #expect(queued.conflicts.map(\.conflict.otherPath) == ["/elsewhere/b.flac"])
        #expect(try store.track(path: "/m/a.flac")?.key == "a.flac")
        #expect(try store.track(path: "/m/b.flac") == nil)
        #expect(try store.jobs(in: [.staged]).isEmpty)

        let same = try store.enqueueMoves(
            [Self.move(from: "/m/a.flac", key: "a.flac", to: "/n/a.flac", key: "a.flac")], bucket: "tracks",
            contentType: { _ in "audio/flac" })
        #expect(same.renamed == 1 && same.jobs.isEmpty)
        #expect(try store.track(path: "/n/a.flac")?.key == "a.flac")

        // The store no longer agrees (the track is gone from the old path): uploaded as usual.
        let stale = try store.enqueueMoves(
            [Self.move(from: "/m/a.flac", key: "a.flac", to: "/o/a.flac", key: "o/a.flac")], bucket: "tracks",
            contentType: { _ in "audio/flac" })
        #expect(stale.uploads.map(\.file.path) == ["/o/a.flac"])
    }
}
