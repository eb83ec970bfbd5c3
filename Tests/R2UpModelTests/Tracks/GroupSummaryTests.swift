import Testing
@testable import R2UpModel

@Suite("Group summaries follow DESIGN §7's aggregate table")
struct GroupSummaryTests {
    static func states(uploading: Int = 0, error: Int = 0, uploaded: Int = 0, none: Int = 0) -> [UploadState] {
        Array(repeating: .uploading, count: uploading) + Array(repeating: .error, count: error)
            + Array(repeating: .uploaded, count: uploaded) + Array(repeating: UploadState.none, count: none)
    }

    static let table: [([UploadState], GroupSummary.Kind?, String?)] = [
        (states(uploading: 2, uploaded: 10, none: 6), .uploading, "10/18"),
        (states(uploading: 1, error: 3, uploaded: 14), .uploading, "14/18"),
        (states(error: 3, uploaded: 15), .error, "15/18"),
        (states(error: 1, none: 4), .error, "0/5"),
        (states(uploaded: 18), .allUploaded, nil),
        (states(uploaded: 1), .allUploaded, nil),
        (states(uploaded: 12, none: 6), .partial, "12/18"),
        (states(none: 18), nil, nil),
        ([], nil, nil),
    ]

    @Test(
        "kind and count of each row (its glyphs and colours are R2UpKit's: GlyphTests)",
        arguments: table)
    func rows(states: [UploadState], kind: GroupSummary.Kind?, count: String?) {
        let summary = GroupSummary(states: states)
        #expect(summary.kind == kind)
        #expect(summary.count == count)
        #expect(summary.total == states.count)
        #expect(summary.name == kind?.rawValue)
    }

    @Test("the counts are tallied per state")
    func counts() {
        let summary = GroupSummary(states: Self.states(uploading: 2, error: 1, uploaded: 12, none: 3))
        #expect(summary.uploading == 2)
        #expect(summary.errors == 1)
        #expect(summary.uploaded == 12)
        #expect(summary.total == 18)
        #expect(summary.count == "12/18")
    }
}
