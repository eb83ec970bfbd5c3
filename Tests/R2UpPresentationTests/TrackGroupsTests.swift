import Foundation
import Testing
@testable import r2up
@testable import R2UpKit
@testable import R2UpModel

/// `serve` groups through `TrackGroups`, `status` through `StatusReport`: both file tracks by
/// the one rule of `AlbumGrouping`, so the two screens never disagree.
@Suite("TrackGroups and status file tracks alike")
struct TrackGroupsTests {
    @Test("a compilation by the folder rule (one folder, one album, several artists, no album artist) is one group under Various Artists")
    func compilationByFolderRule() {
        let paths = ["/m/hits/01.mp3", "/m/hits/02.mp3", "/m/solo/01.mp3"]
        let tracks = paths.map { TrackRecord(path: $0, size: 1, mtimeNs: 1, uploadState: .uploaded, updatedAt: Date(timeIntervalSince1970: 0)) }
        let tags: [String: AudioTags] = [
            "/m/hits/01.mp3": AudioTags(title: "One", artist: "Ana", album: "Summer Hits", track: 1),
            "/m/hits/02.mp3": AudioTags(title: "Two", artist: "Ben", album: "Summer Hits", track: 2),
            "/m/solo/01.mp3": AudioTags(title: "Solo", artist: "Cleo", album: "Alone", track: 1),
        ]
        let served = TrackGroups.make(tracks, path: \.path, state: \.uploadState, tags: tags, by: .album)
        let status = StatusReport(tracks: tracks, tags: tags, by: .album)
        #expect(served.map { $0.heading?.artist } == ["Cleo", AudioTags.variousArtists])
        #expect(served.map { $0.heading?.artist } == status.groups.map { $0.heading?.artist })
        #expect(served.map { $0.tracks.map(\.path) } == status.groups.map { $0.tracks.map(\.record.path) })
    }
}
