import Foundation
import Testing

@testable import R2UpKit
import R2UpModel
import R2UpStore

/// `du`'s arithmetic and `--remote`'s prefix, without a server.
@Suite("Space usage")
struct SpaceUsageTests {
    func track(_ key: String?, size: Int64 = 10, upload: UploadState = .uploaded, download: DownloadState = .none) -> TrackRecord {
        TrackRecord(path: "/m/" + (key ?? "x"), size: size, mtimeNs: 0, uploadState: upload, downloadState: download, bucket: "b", key: key, etag: "e", updatedAt: Date())
    }

    @Test("each track lands in one of local only, cloud only, both; the bucket counts an edited file's old copy")
    func counts() {
        var counts = SpaceCounts()
        counts.add(track("a", size: 10), diskSize: 10)  // both
        counts.add(track("b", size: 20), diskSize: nil)  // cloud only
        counts.add(track(nil, size: 30, upload: .none), diskSize: 30)  // never uploaded
        counts.add(track("d", size: 40, upload: .none), diskSize: 44)  // changed since upload (following cleared the state)
        counts.add(track("e", size: 50, upload: .none, download: .downloaded), diskSize: 50)  // fetched back
        counts.add(track(nil, size: 60, upload: .error), diskSize: nil)  // gone, no cloud copy
        #expect(counts.tracks == 6)
        #expect(counts.onDisk == 10 + 30 + 44 + 50)
        #expect(counts.inBucket == 10 + 20 + 40 + 50)
        #expect(counts.localOnly == 30 + 44)
        #expect(counts.cloudOnly == 20)
        #expect(counts.both == 10 + 50)
    }

    @Test("the folder part every key shares, whole folders only", arguments: [
        (["music/a/1.flac", "music/a/2.flac"], "music/a/"),
        (["music/a/1.flac", "music/b/2.flac"], "music/"),
        (["music/ab/1.flac", "music/ac/2.flac"], "music/"),
        (["x.flac", "music/a.flac"], ""),
        (["music/a/1.flac"], "music/a/"),
        ([], ""),
    ])
    func commonPrefix(keys: [String], expected: String) {
        #expect(RemoteSpace.commonPrefix(keys.map { track($0) }) == expected)
    }
}
