import Foundation
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("Tracks in the store")
struct TrackStoreTests {
    @Test("a queued file becomes a track with no state; its row reads back the same")
    func insert() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        _ = try store.enqueue([Sample.job("/music/a/01.flac", key: "a/01.flac", length: 100, mtimeNs: 5)])
        let track = try #require(try store.track(path: "/music/a/01.flac"))
        #expect(track.id != nil)
        #expect(track.size == 100 && track.mtimeNs == 5)
        #expect(track.uploadState == .none)
        #expect(track.downloadState == .none)
        #expect(track.updatedAt == Sample.date)
        #expect(try store.track(path: "/music/a/02.flac") == nil)
        #expect(track.icon() == .localOnly)
    }

    @Test("download states, as pull sets them, are kept apart from upload states")
    func download() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        let cloud = CloudCopy(bucket: "tracks", key: "m/01.flac", etag: "\"e\"")
        // A track r2up did not know gets its row from the download.
        var track = try store.beginDownload(path: "/m/01.flac", size: 100, cloud: cloud)
        #expect(track.icon() == .downloading)
        #expect(track.uploadState == .none)
        #expect(track.key == "m/01.flac")
        clock.advance(10)
        track = try store.failDownload(path: "/m/01.flac", reason: "gone", cloud: cloud)
        #expect(track.icon() == .downloadError)
        #expect(track.lastError == "gone")
        #expect(track.updatedAt == Sample.date.addingTimeInterval(10))
        #expect(try store.failedDownloads().map(\.path) == ["/m/01.flac"])
        track = try store.finishDownload(path: "/m/01.flac", size: 100, mtimeNs: 7, cloud: cloud)
        #expect(track.downloadState == .downloaded)
        #expect(track.lastError == nil)
        #expect(track.mtimeNs == 7)
        #expect(try store.track(path: "/m/01.flac") == track)
        #expect(try store.failedDownloads().isEmpty)
    }

    @Test("queued again: an unchanged uploaded file keeps its state and is not queued; a changed one is no longer uploaded")
    func identity() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let first = Sample.job("/m/01.flac", key: "m/01.flac", length: 100, mtimeNs: 5)
        _ = try store.enqueue([first])
        try store.completeJob(id: first.id, historyItem: Sample.item("01.flac", key: "m/01.flac", size: 100))
        #expect(try store.track(path: "/m/01.flac")?.uploadState == .uploaded)

        let same = Sample.job("/m/01.flac", key: "m/01.flac", length: 100, mtimeNs: 5)
        let unchanged = try store.enqueue([same], unlessUploaded: [same.id])
        guard case .uploaded = unchanged[0].disposition else {
            Issue.record("an unchanged uploaded file was queued: \(unchanged[0].disposition)")
            return
        }
        #expect(try store.track(path: "/m/01.flac")?.uploadState == .uploaded)

        let edited = Sample.job("/m/01.flac", key: "m/01.flac", length: 120, mtimeNs: 6)
        let queued = try store.enqueue([edited], unlessUploaded: [edited.id])
        #expect(queued[0].isNew)
        let track = try #require(try store.track(path: "/m/01.flac"))
        #expect(track.uploadState == .none)
        #expect(track.size == 120)
    }

    @Test("tracks under a folder: its files and its subfolders', not a sibling with a longer name")
    func under() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        for path in ["/m/a/2.flac", "/m/a/1.flac", "/m/a/cd2/1.flac", "/m/ab/1.flac", "/m/a", "/m/a0/1.flac", "/n/1.flac"] {
            try store.upsertTrack(path: path, size: 1, mtimeNs: 1)
        }
        let expected = ["/m/a/1.flac", "/m/a/2.flac", "/m/a/cd2/1.flac"]
        #expect(try store.tracks(under: "/m/a").map(\.path) == expected)
        #expect(try store.tracks(under: "/m/a/").map(\.path) == expected)
        #expect(try store.tracks(under: "/").count == 7)
        #expect(try store.tracks(under: "/x").isEmpty)
    }
}
