import Testing
@testable import R2UpModel

@Suite("Text columns align by display width")
struct TextColumnsTests {
    @Test("display width: wide CJK and emoji 2, combining marks 0, control characters 0", arguments: [
        ("abc", 3), ("", 0), ("日本語", 6), ("e\u{301}", 1), ("🎵", 2), ("👍🏽", 2), ("❤️", 2), ("👨‍👩‍👧", 2), ("🇯🇵", 2), ("1️⃣", 2), ("♪", 1), ("한국", 4),
        ("Ｆｕｌｌ", 8), ("↑⚠☁", 3), ("a\u{7}b", 2), ("é", 1), ("ß", 1),
    ])
    func width(text: String, width: Int) {
        #expect(TextColumns.displayWidth(text) == width)
    }

    @Test("cells pad to the widest in their column; the last column is not padded")
    func lines() {
        let lines = TextColumns.lines([["a", "1", "x"], ["日本", "100", "yy"]], alignments: [.left, .right])
        #expect(lines == ["a       1  x", "日本  100  yy"])
    }

    @Test("a right-aligned last column is padded on its left")
    func rightLast() {
        #expect(TextColumns.lines([["a", "1"], ["b", "22"]], alignments: [.left, .right]) == ["a   1", "b  22"])
    }

    @Test("control characters become '?'")
    func printable() {
        #expect(TextColumns.printable("a\nb\u{1B}[31mc\u{7F}\u{85}") == "a?b?[31mc??")
        #expect(TextColumns.printable("plain ✓") == "plain ✓")
    }
}
