import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore

/// `sync --key-template` on the plan: keys from tags, unchanged tracks stay unchanged, clashes refused.
@Suite("Sync plan with a key template")
struct SyncTemplateTests {
    let old: Int64 = 1_700_000_000_000_000_000

    func file(_ relative: String) -> ScannedFile {
        ScannedFile(path: "/music/" + relative, relativePath: relative, size: 10, mtimeNs: old, ctimeNs: old)
    }

    @Test("templated keys decide new, unchanged and clashing files; a clash names both files")
    func templatedPlan() throws {
        let template = try KeyTemplate("{artist}/{title}.{ext}")
        let tags: [String: AudioTags] = [
            "/music/x/1.flac": AudioTags(title: "One", artist: "A"),
            "/music/x/2.flac": AudioTags(title: "Two", artist: "A"),
            "/music/y/dup.flac": AudioTags(title: "Two", artist: "A"),
        ]
        var plan = SyncPlan(prefix: "p/", bucket: "b", filter: SyncFilter(), remote: nil, minAgeNs: 0, nowNs: old + 1)
        plan.keyFor = { "p/" + template.key(tags: tags[$0.path], relativePath: $0.relativePath) }
        let one = file("x/1.flac")
        plan.add(one, track: SyncTrackState(size: 10, mtimeNs: old, uploadState: .uploaded, bucket: "b", key: "p/A/One.flac"))
        plan.add(file("x/2.flac"), track: nil)
        plan.add(file("y/dup.flac"), track: nil)
        plan.add(file("z/untagged.mp3"), track: nil)
        plan.finish()
        #expect(plan.unchanged == 1)
        #expect(plan.uploads.map(\.key) == ["p/Unknown Artist/untagged.mp3"])
        #expect(plan.rejected == [
            SyncFailure(path: "/music/x/2.flac", key: "p/A/Two.flac", error: "maps to the key 'p/A/Two.flac' with the key template option, as 1 other file here does; tag them apart or change the template"),
            SyncFailure(path: "/music/y/dup.flac", key: "p/A/Two.flac", error: "maps to the key 'p/A/Two.flac' with the key template option, as 1 other file here does; tag them apart or change the template"),
        ])
    }
}
