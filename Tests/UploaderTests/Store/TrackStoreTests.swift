import Foundation
import Testing

@testable import Uploader

@Suite("Tracks in the store")
struct TrackStoreTests {
    @Test("a new track has no state; its row reads back the same")
    func insert() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let track = try store.upsertTrack(path: "/music/a/01.flac", size: 100, mtimeNs: 5)
        #expect(track.id != nil)
        #expect(track.uploadState == .none)
        #expect(track.downloadState == .none)
        #expect(track.updatedAt == Sample.date)
        #expect(try store.track(path: "/music/a/01.flac") == track)
        #expect(try store.track(path: "/music/a/02.flac") == nil)
        #expect(track.icon() == .localOnly)
    }

    @Test("upload states go through the lifecycle and keep the cloud copy")
    func uploadLifecycle() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        try store.upsertTrack(path: "/m/01.flac", size: 100, mtimeNs: 5)
        clock.advance(10)
        var track = try store.setUploadState(path: "/m/01.flac", state: .uploading)
        #expect(track.icon() == .uploading)
        #expect(track.updatedAt == Sample.date.addingTimeInterval(10))
        track = try store.setUploadState(path: "/m/01.flac", state: .error, error: "AccessDenied")
        #expect(track.icon() == .uploadError)
        #expect(track.lastError == "AccessDenied")
        track = try store.setUploadState(
            path: "/m/01.flac", state: .uploaded, cloud: CloudCopy(bucket: "b", key: "m/01.flac", etag: "\"e\""))
        #expect(track.lastError == nil)
        #expect(track.key == "m/01.flac")
        #expect(track.icon() == .uploaded)
        // a later state change without a cloud copy keeps the stored one
        track = try store.setUploadState(path: "/m/01.flac", state: .uploading)
        #expect(track.bucket == "b")
        #expect(track.etag == "\"e\"")
        #expect(try store.track(path: "/m/01.flac") == track)
    }

    @Test("download states are kept apart from upload states")
    func download() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try store.upsertTrack(path: "/m/01.flac", size: 100, mtimeNs: 5)
        try store.setUploadState(path: "/m/01.flac", state: .uploaded)
        let track = try store.setDownloadState(path: "/m/01.flac", state: .downloading)
        #expect(track.uploadState == .uploaded)
        #expect(track.icon() == .downloading)
        #expect(try store.setDownloadState(path: "/m/01.flac", state: .error, error: "gone").icon() == .downloadError)
    }

    @Test("a changed file is no longer uploaded; an unchanged one keeps its state")
    func identity() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try store.upsertTrack(path: "/m/01.flac", size: 100, mtimeNs: 5)
        try store.setUploadState(path: "/m/01.flac", state: .uploaded)
        #expect(try store.upsertTrack(path: "/m/01.flac", size: 100, mtimeNs: 5).uploadState == .uploaded)
        let changed = try store.upsertTrack(path: "/m/01.flac", size: 120, mtimeNs: 6)
        #expect(changed.uploadState == .none)
        #expect(changed.size == 120)
        #expect(try store.track(path: "/m/01.flac") == changed)
    }

    @Test("setting the state of an unknown track is an error")
    func unknownTrack() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        #expect(throws: StoreError.notFound("track /nope")) { try store.setUploadState(path: "/nope", state: .uploading) }
        #expect(throws: StoreError.notFound("track /nope")) { try store.setDownloadState(path: "/nope", state: .downloading) }
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
