import R2UpKit
import R2UpModel
import Testing

/// The glyphs, ASCII fallbacks and colours the CLI and `r2up serve` draw states with (R2UpKit's,
/// not the model's: the model says which state).
@Suite("Track and group glyphs")
struct GlyphTests {
    static let appearances: [(TrackIcon, Int, String, String, IconColour, Bool, String)] = [
        (TrackIcon.uploading, 1, "↑", "*", IconColour.orange, false, "uploading"),
        (.uploadError, 2, "⚠", "!", .red, false, "uploadError"),
        (.downloading, 3, "⇣", "v", .accent, true, "downloading"),
        (.downloadError, 4, "⚠", "!", .red, false, "downloadError"),
        (.downloaded, 5, "↓", "V", .green, false, "downloaded"),
        (.uploaded, 6, "↑", "^", .green, false, "uploaded"),
        (.cloudOnly, 7, "☁", "@", .accent, false, "cloudOnly"),
    ]

    @Test(
        "glyph, ASCII fallback, colour and outline of every icon",
        arguments: appearances)
    func appearance(
        icon: TrackIcon, priority: Int, glyph: String, ascii: String, colour: IconColour, hollow: Bool, name: String
    ) {
        #expect(icon.glyph == glyph)
        #expect(icon.glyph(ascii: false) == glyph)
        #expect(icon.glyph(ascii: true) == ascii)
        #expect(icon.colour == colour)
        #expect(icon.isHollow == hollow)
    }

    @Test("a local-only track shows nothing")
    func localOnlyShowsNothing() {
        #expect(TrackIcon.localOnly.glyph == nil)
        #expect(TrackIcon.localOnly.asciiGlyph == nil)
        #expect(TrackIcon.localOnly.colour == nil)
    }

    @Test("without colour or in ASCII, uploading and uploaded have different marks")
    func uploadingVersusUploaded() {
        for (ascii, colour) in [(true, true), (true, false), (false, false)] {
            #expect(
                TrackIcon.uploading.glyph(ascii: ascii, colour: colour) != TrackIcon.uploaded.glyph(ascii: ascii, colour: colour))
        }
        #expect(TrackIcon.uploading.glyph(ascii: false, colour: false) == "⇡")
        #expect(TrackIcon.uploading.glyph(ascii: false, colour: true) == "↑")  // orange then; uploaded is green
        #expect(TrackIcon.uploading.glyph(ascii: true, colour: false) == "*")
    }

    static func states(uploading: Int = 0, error: Int = 0, uploaded: Int = 0, none: Int = 0) -> [UploadState] {
        Array(repeating: .uploading, count: uploading) + Array(repeating: .error, count: error)
            + Array(repeating: .uploaded, count: uploaded) + Array(repeating: UploadState.none, count: none)
    }

    static let groups: [([UploadState], GroupSummary.Kind?, IconColour?, Bool, String, String)] = [
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
        "colour, outline and label of each group row (DESIGN §7's aggregate table)",
        arguments: groups)
    func groupRow(
        states: [UploadState], kind: GroupSummary.Kind?, colour: IconColour?, hollow: Bool, label: String, ascii: String
    ) {
        let summary = GroupSummary(states: states)
        #expect(summary.kind == kind)
        #expect(summary.colour == colour)
        #expect(summary.isHollow == hollow)
        #expect(summary.label == label)
        #expect(summary.label(ascii: true) == ascii)
        #expect(summary.glyph == (label.isEmpty ? nil : String(label.prefix(1))))
    }
}
