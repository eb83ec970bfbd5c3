import Testing
@testable import R2UpModel

@Suite("Per-track icons follow DESIGN §7's priority table")
struct TrackIconTests {
    static let priorities: [(UploadState, DownloadState, Bool, Bool, TrackIcon)] = [
        // priority 1: uploading beats everything
        (UploadState.uploading, DownloadState.none, true, false, TrackIcon.uploading),
        (.uploading, .error, true, true, .uploading),
        (.uploading, .downloaded, true, true, .uploading),
        // 2: upload error
        (.error, .none, true, false, .uploadError),
        (.error, .downloading, true, true, .uploadError),
        // 3: downloading
        (.none, .downloading, false, true, .downloading),
        (.uploaded, .downloading, true, true, .downloading),
        // 4: download error
        (.none, .error, false, true, .downloadError),
        (.uploaded, .error, true, true, .downloadError),
        // 5: downloaded
        (.none, .downloaded, true, true, .downloaded),
        (.uploaded, .downloaded, true, true, .downloaded),
        // 6: uploaded
        (.uploaded, .none, true, true, .uploaded),
        (.uploaded, .none, false, true, .uploaded),
        // 7: cloud only
        (.none, .none, false, true, .cloudOnly),
        // 8: local only (and a local file whose cloud copy is known but has no state)
        (.none, .none, true, false, .localOnly),
        (.none, .none, true, true, .localOnly),
        (.none, .none, false, false, .localOnly),
    ]

    @Test(
        "each row of the table, and the row above it winning over the rows below",
        arguments: priorities)
    func priority(upload: UploadState, download: DownloadState, isLocal: Bool, isInCloud: Bool, icon: TrackIcon) {
        #expect(TrackIcon.for(upload: upload, download: download, isLocal: isLocal, isInCloud: isInCloud) == icon)
    }

    @Test("all 64 combinations pick the lowest-numbered state that applies")
    func exhaustive() {
        for upload in UploadState.allCases {
            for download in DownloadState.allCases {
                for isLocal in [false, true] {
                    for isInCloud in [false, true] {
                        var applies: [TrackIcon] = [.localOnly]
                        if upload == .uploading { applies.append(.uploading) }
                        if upload == .error { applies.append(.uploadError) }
                        if download == .downloading { applies.append(.downloading) }
                        if download == .error { applies.append(.downloadError) }
                        if download == .downloaded { applies.append(.downloaded) }
                        if upload == .uploaded { applies.append(.uploaded) }
                        if isInCloud && !isLocal { applies.append(.cloudOnly) }
                        let icon = TrackIcon.for(upload: upload, download: download, isLocal: isLocal, isInCloud: isInCloud)
                        #expect(icon == applies.min(), "\(upload) \(download) local=\(isLocal) cloud=\(isInCloud)")
                    }
                }
            }
        }
    }

    @Test(
        "priority and JSON name of every icon (its glyphs are R2UpKit's: GlyphTests)",
        arguments: [
            (TrackIcon.uploading, 1, "uploading"), (.uploadError, 2, "uploadError"), (.downloading, 3, "downloading"),
            (.downloadError, 4, "downloadError"), (.downloaded, 5, "downloaded"), (.uploaded, 6, "uploaded"),
            (.cloudOnly, 7, "cloudOnly"),
        ])
    func appearance(icon: TrackIcon, priority: Int, name: String) {
        #expect(icon.rawValue == priority)
        #expect(icon.name == name)
    }

    @Test("a local-only track comes last")
    func localOnlyComesLast() {
        #expect(TrackIcon.localOnly.rawValue == 8)
        #expect(TrackIcon.localOnly.name == "localOnly")
    }

    @Test("priorities are 1 to 8 in table order, and names are unique")
    func ordering() {
        #expect(TrackIcon.allCases.map(\.rawValue) == Array(1...8))
        #expect(TrackIcon.allCases.sorted() == TrackIcon.allCases)
        #expect(Set(TrackIcon.allCases.map(\.name)).count == 8)
        #expect(UploadState.allCases.map(\.rawValue) == ["none", "uploading", "uploaded", "error"])
        #expect(DownloadState.allCases.map(\.rawValue) == ["none", "downloading", "downloaded", "error"])
    }
}
