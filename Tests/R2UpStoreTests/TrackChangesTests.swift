import Foundation
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("Tracks changed since a mark")
struct TrackChangesTests {
    @Test("only the tracks written since the mark come, as tracks(under:) gives them; the seconds before a read come again")
    func changedSince() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let store = try folder.store(clock: clock)
        _ = try store.enqueue(["/m/a.flac", "/m/b.flac", "/m/c.flac"].map { Sample.job($0, key: String($0.dropFirst(3)), length: 10, mtimeNs: 1) })
        clock.advance(60)
        let mark = store.changeMark()
        #expect(try store.tracksChanged(since: mark).tracks.isEmpty)

        clock.advance(10)
        try store.setUploadState(path: "/m/b.flac", state: .error, error: "boom")
        let changed = try store.tracksChanged(since: mark)
        #expect(changed.tracks.map(\.path) == ["/m/b.flac"])
        #expect(changed.tracks.first?.lastError == "boom", "\(changed.tracks)")
        #expect(changed.tracks == (try store.tracks(under: "/m")).filter { $0.path == "/m/b.flac" })
        // The next read starts a little before this one: b comes again, then no more.
        #expect(changed.next == Sample.date.addingTimeInterval(70 - Store.changeSlack))
        #expect(try store.tracksChanged(since: changed.next).tracks.map(\.path) == ["/m/b.flac"])
        clock.advance(10)
        #expect(try store.tracksChanged(since: store.changeMark()).tracks.isEmpty)
    }
}
