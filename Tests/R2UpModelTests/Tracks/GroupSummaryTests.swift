import Testing
@testable import R2UpModel

@Suite("Group summaries follow DESIGN §7's aggregate table")
struct GroupSummaryTests {
    static func states(uploading: Int = 0, error: Int = 0, uploaded: Int = 0, none: Int = 0) -> [UploadState] {
        Array(repeating: .uploading, count: uploading) + Array(repeating: .error, count: error)
            + Array(repeating: .uploaded, count: uploaded) + Array(repeating: UploadState.none, count: none)
    }

    static let table: [([UploadState], GroupSummary.Kind?, IconColour?, Bool, String, String)] = [
        // 1: any uploading → orange ↑ "uploaded/total", even with errors
        (states(uploading: 2, uploaded: 10, none: 6), .uploading, .orange,
         false, "↑ 10/18", "* 10/18"),
        (states(uploading: 1, error: 3, uploaded: 14), .uploading, .orange, false, "↑ 14/18", "* 14/18"),
        // 2: else any error → red ⚠ with the count
        (states(error: 3, uploaded: 15), .error, .red, false, "⚠ 15/18", "! 15/18"),
        (states(error: 1, none: 4), .error, .red, false, "⚠ 0/5", "! 0/5"),
        // 3: all uploaded → green ↑, no count
        (states(uploaded: 18), .allUploaded, .green, false, "↑", "^"),
        (states(uploaded: 1), .allUploaded, .green, false, "↑", "^"),
        // 4: some uploaded → hollow ↑, secondary, with the count
        (states(uploaded: 12, none: 6), .partial, .secondary, true, "⇡ 12/18", "^ 12/18"),
        // 5: no track has an upload state → nothing
        (states(none: 18), nil, nil, false, "", ""),
        ([], nil, nil, false, "", ""),
    ]

    @Test(
        "kind, colour, outline and label of each row",
        arguments: table)
    func rows(
        states: [UploadState], kind: GroupSummary.Kind?, colour: IconColour?, hollow: Bool, label: String, ascii: String
    ) {
        let summary = GroupSummary(states: states)
        #expect(summary.kind == kind)
        #expect(summary.colour == colour)
        #expect(summary.isHollow == hollow)
        #expect(summary.label == label)
        #expect(summary.label(ascii: true) == ascii)
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
        #expect(summary.glyph == "↑")
    }
}
