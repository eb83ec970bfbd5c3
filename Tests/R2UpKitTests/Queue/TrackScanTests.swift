import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport
@testable import R2UpTransfer

/// State follows the file (issue 14 item 5) and the folder's prefix is what all its tracks agree on.
@Suite("TrackScan and prefix inference")
struct TrackScanTests {
    static func track(
        _ path: String, key: String? = nil, upload: UploadState = .uploaded, download: DownloadState = .none
    ) -> TrackRecord {
        TrackRecord(
            path: path, size: 10, mtimeNs: 5, uploadState: upload, downloadState: download, bucket: key.map { _ in "b" },
            key: key, updatedAt: Date(timeIntervalSince1970: 0))
    }

    @Test("an unchanged file keeps its states; a changed one is not uploaded nor downloaded, and says so")
    func changed() {
        let same = TrackScan.following(Self.track("/m/a", key: "a"), size: 10, mtimeNs: 5)
        #expect(same.uploadState == .uploaded)
        #expect(!same.changedSinceUpload)
        #expect(same.icon(isLocal: same.isOnDisk) == .uploaded)

        let edited = TrackScan.following(Self.track("/m/a", key: "a"), size: 11, mtimeNs: 5)
        #expect(edited.uploadState == .none)
        #expect(edited.changedSinceUpload)
        #expect(edited.icon(isLocal: edited.isOnDisk) == .localOnly)

        let touched = TrackScan.following(Self.track("/m/a", key: "a", upload: .none, download: .downloaded), size: 10, mtimeNs: 6)
        #expect(touched.downloadState == .none)
        #expect(touched.changedSinceUpload)

        // A failed or never uploaded track has nothing to fall back from.
        let failed = TrackScan.following(Self.track("/m/a", upload: .error), size: 11, mtimeNs: 5)
        #expect(failed.uploadState == .error)
        #expect(!failed.changedSinceUpload)
    }

    @Test("a gone file with a known key is cloud only; without one it is local only (no icon)")
    func gone() {
        let cloud = TrackScan.following(Self.track("/m/a", key: "a"), size: nil, mtimeNs: nil)
        #expect(!cloud.isOnDisk)
        #expect(cloud.icon(isLocal: cloud.isOnDisk) == .cloudOnly)
        let downloaded = TrackScan.following(Self.track("/m/a", key: "a", upload: .none, download: .downloaded), size: nil, mtimeNs: nil)
        #expect(downloaded.icon(isLocal: downloaded.isOnDisk) == .cloudOnly)
        let never = TrackScan.following(Self.track("/m/a", upload: .none), size: nil, mtimeNs: nil)
        #expect(never.icon(isLocal: never.isOnDisk) == .localOnly)
    }

    @Test("the prefix is the one every keyed track under the folder agrees on, else nil")
    func inferPrefix() throws {
        let agree = [Self.track("/m/x/a.flac", key: "p/q/a.flac"), Self.track("/m/x/s/b.flac", key: "p/q/s/b.flac"), Self.track("/m/x/c.flac")]
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: agree) == "p/q/")
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: [Self.track("/m/x/a.flac", key: "a.flac")]) == "")
        let differ = agree + [Self.track("/m/x/d.flac", key: "other/d.flac")]
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: differ) == nil)
        let unrelated = agree + [Self.track("/m/x/e.flac", key: "Artist/Album/01 E.flac")]
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: unrelated) == nil)
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: [Self.track("/m/x/c.flac")]) == nil)
        // A name in NFD on disk maps to its NFC key.
        let nfd = [Self.track("/m/x/Cafe\u{301}.mp3", key: "p/Caf\u{E9}.mp3")]
        #expect(CloudOnly.inferPrefix(folder: "/m/x", tracks: nfd) == "p/")

        #expect(try CloudOnly.prefix(folder: "/m/x", tracks: differ, given: "given") == "given/")
        #expect(throws: DownloadError.unknownPrefix(folder: "/m/x", ambiguous: true)) {
            try CloudOnly.prefix(folder: "/m/x", tracks: differ, given: nil)
        }
        #expect(throws: DownloadError.unknownPrefix(folder: "/m/x", ambiguous: false)) {
            try CloudOnly.prefix(folder: "/m/x", tracks: [], given: nil)
        }
    }

}
