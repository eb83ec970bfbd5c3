import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
@testable import R2UpTransfer
import R2UpTestSupport

/// The sync rules on values alone: what is unchanged, changed, new, waiting, filtered, clashing.
@Suite("Sync plan")
struct SyncPlanTests {
    let now: Int64 = 1_800_000_000_000_000_000
    let old: Int64 = 1_700_000_000_000_000_000

    func file(_ relative: String, size: Int64 = 10, mtime: Int64? = nil, ctime: Int64? = nil) -> ScannedFile {
        ScannedFile(
            path: "/music/" + relative, relativePath: relative, size: size, mtimeNs: mtime ?? old, ctimeNs: ctime ?? mtime ?? old)
    }

    func uploaded(_ file: ScannedFile, key: String, bucket: String = "b") -> SyncTrackState {
        SyncTrackState(size: file.size, mtimeNs: file.mtimeNs, uploadState: .uploaded, bucket: bucket, key: key)
    }

    func plan(
        _ files: [ScannedFile], tracks: [String: SyncTrackState] = [:], filter: SyncFilter = SyncFilter(),
        remote: [String: ObjectSummary]? = nil, prefix: String = "p/", minAge: Int64 = 10_000_000_000
    ) -> SyncPlan {
        SyncPlan(files: files, prefix: prefix, bucket: "b", filter: filter, tracks: tracks, remote: remote, minAgeNs: minAge, nowNs: now)
    }

    @Test("an uploaded file with the same size and mtime is unchanged; size, mtime, key or bucket moved means changed")
    func changeDetection() {
        let same = file("a.flac")
        let grown = file("b.flac", size: 11)
        let touched = file("c.flac", mtime: old + 1)
        let moved = file("d.flac")
        let elsewhere = file("e.flac")
        let fresh = file("f.flac")
        let tracks = [
            same.path: uploaded(same, key: "p/a.flac"),
            grown.path: uploaded(file("b.flac"), key: "p/b.flac"),
            touched.path: uploaded(file("c.flac"), key: "p/c.flac"),
            moved.path: uploaded(moved, key: "old/d.flac"),
            elsewhere.path: uploaded(elsewhere, key: "p/e.flac", bucket: "other"),
        ]
        let result = plan([same, grown, touched, moved, elsewhere, fresh], tracks: tracks)
        #expect(result.unchanged == 1)
        #expect(result.uploads.map(\.key) == ["p/b.flac", "p/c.flac", "p/d.flac", "p/e.flac", "p/f.flac"])
        #expect(result.uploads.map(\.reason) == [.changed, .changed, .changed, .new, .new])
    }

    @Test("a file changed within --min-age waits, by mtime or by ctime (cp -p keeps an old mtime)")
    func minAge() {
        let young = file("young.m4a", mtime: now - 2_000_000_000)
        let copying = file("copying.m4a", mtime: old, ctime: now - 1_000_000_000)
        let ripe = file("ripe.m4a", mtime: now - 11_000_000_000)
        let result = plan([young, copying, ripe])
        #expect(result.waiting.map(\.relativePath) == ["young.m4a", "copying.m4a"])
        #expect(result.uploads.map(\.key) == ["p/ripe.m4a"])
        #expect(plan([young], minAge: 0).uploads.count == 1)
    }

    @Test("includes and excludes: names without a slash, paths with one; default excludes")
    func filters() {
        let files = ["Live/a.flac", "Live/b.mp3", "Studio/c.flac", "Studio/d.flac.part", "Studio/notes.txt"].map { file($0) }
        let flacOnly = plan(files, filter: SyncFilter(includes: ["*.flac"]))
        #expect(flacOnly.uploads.map(\.key) == ["p/Live/a.flac", "p/Studio/c.flac"])
        #expect(flacOnly.filtered == 3)
        let noLive = plan(files, filter: SyncFilter(excludes: ["Live/*", "*.txt"]))
        #expect(noLive.uploads.map(\.key) == ["p/Studio/c.flac"])
        let everything = plan(files, filter: SyncFilter(defaultExcludes: false))
        #expect(everything.uploads.count == 5)
    }

    @Test("two names that normalise to one key are both refused, with a line saying why")
    func nfcTwins() {
        let nfc = ScannedFile(path: "/music/Caf\u{E9}.flac", relativePath: "Caf\u{E9}.flac", size: 1, mtimeNs: old, ctimeNs: old)
        let nfd = ScannedFile(path: "/music/Cafe\u{301}.flac", relativePath: "Caf\u{E9}.flac", size: 1, mtimeNs: old, ctimeNs: old)
        let result = plan([nfc, nfd])
        #expect(result.uploads.isEmpty)
        #expect(result.rejected.count == 2)
        #expect(result.rejected.first?.error == "maps to the key 'p/Caf\u{E9}.flac', as 1 other file here does (names that differ only in Unicode normalisation, or a the prefix option or the key option that folds them together); rename one or change the prefix")
    }

    @Test("--verify-remote: a missing or wrong-sized object is uploaded again; an object with no file is cloud only")
    func verifyRemote() {
        let kept = file("kept.flac")
        let gone = file("gone.flac")
        let shrunk = file("shrunk.flac")
        let tracks = [kept.path: uploaded(kept, key: "p/kept.flac"), gone.path: uploaded(gone, key: "p/gone.flac"),
                      shrunk.path: uploaded(shrunk, key: "p/shrunk.flac")]
        let remote = [
            "p/kept.flac": ObjectSummary(key: "p/kept.flac", size: 10, etag: "e1"),
            "p/shrunk.flac": ObjectSummary(key: "p/shrunk.flac", size: 3, etag: "e2"),
            "p/only-there.flac": ObjectSummary(key: "p/only-there.flac", size: 7, etag: "e3"),
        ]
        let result = plan([kept, gone, shrunk], tracks: tracks, remote: remote)
        #expect(result.unchanged == 1)
        #expect(result.uploads.map(\.key) == ["p/gone.flac", "p/shrunk.flac"])
        #expect(result.uploads.allSatisfy { $0.reason == .missingRemote })
        #expect(result.cloudOnly.map(\.key) == ["p/only-there.flac"])
    }

    @Test("prefixes are NFC and end in one slash")
    func prefixes() {
        #expect(SyncPlan.normalizedPrefix(nil) == "")
        #expect(SyncPlan.normalizedPrefix("music") == "music/")
        #expect(SyncPlan.normalizedPrefix("music/") == "music/")
        #expect(SyncPlan.normalizedPrefix("Cafe\u{301}") == "Caf\u{E9}/")
    }

    @Test("counts with thousands separators, the same in every locale (sync's line is the CLI's: SyncLineTests)")
    func counts() {
        #expect(SyncSummary.count(1_234_567) == "1,234,567")
        #expect(SyncSummary.count(999) == "999")
    }
}
