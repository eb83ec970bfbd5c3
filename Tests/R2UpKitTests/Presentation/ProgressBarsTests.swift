import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore

@Suite("Progress bars")
struct ProgressBarsTests {
    static let plain = TerminalStyle(ascii: true, colour: false)
    static let unicode = TerminalStyle(ascii: false, colour: false)
    static let mebibyte: Int64 = 1_048_576

    func file(_ name: String, size: Int64, sent: Int64) -> TransferProgress.File {
        TransferProgress.File(id: UUID(), name: name, size: size, sent: sent)
    }

    @Test("a file line: name padded, bar, percent, bytes; exactly the terminal's width")
    func fileLine() {
        let bars = ProgressBars(width: 80, style: Self.plain)
        let line = bars.fileLine(file("song.m4a", size: 10 * Self.mebibyte, sent: 5 * Self.mebibyte / 2))
        #expect(line == "  song.m4a" + String(repeating: " ", count: 28) + "  [####------------]   25%  2.5 MB / 10 MB")
        #expect(line.count == 80)
    }

    @Test("the total line: files, bar, percent, bytes, rate and ETA")
    func totalLine() {
        var snapshot = TransferProgress.Snapshot()
        snapshot.active = [file("song.m4a", size: 10 * Self.mebibyte, sent: 5 * Self.mebibyte / 2)]
        snapshot.filesTotal = 3
        snapshot.filesDone = 1
        snapshot.bytesTotal = 30 * Self.mebibyte
        snapshot.bytesDone = 10 * Self.mebibyte + 5 * Self.mebibyte / 2
        let bars = ProgressBars(width: 80, style: Self.plain)
        #expect(
            bars.lines(snapshot, rate: Double(Self.mebibyte)) == [
                "  song.m4a" + String(repeating: " ", count: 28) + "  [####------------]   25%  2.5 MB / 10 MB",
                "1/3 files  [######----------]   41%  12.5 MB / 30 MB  1 MB/s  ETA 0:18",
            ])
        #expect(bars.totalLine(snapshot, rate: nil) == "1/3 files  [######----------]   41%  12.5 MB / 30 MB  ETA --:--")
        snapshot.filesFailed = 1
        #expect(bars.totalLine(snapshot, rate: nil) == "2/3 files, 1 failed  [######----------]   41%  12.5 MB / 30 MB  ETA --:--")
    }

    @Test("Unicode bars fill in eighths; ASCII in whole cells")
    func barCells() {
        let unicode = ProgressBars(width: 80, style: Self.unicode)
        #expect(unicode.bar(55, of: 100, width: 10) == "▕█████▌░░░░▏")
        #expect(unicode.bar(0, of: 100, width: 4) == "▕░░░░▏")
        #expect(unicode.bar(100, of: 100, width: 4) == "▕████▏")
        #expect(unicode.bar(0, of: 0, width: 4) == "▕████▏")
        let ascii = ProgressBars(width: 80, style: Self.plain)
        #expect(ascii.bar(55, of: 100, width: 10) == "[#####-----]")
        #expect(ascii.bar(150, of: 100, width: 4) == "[####]")
    }

    @Test("colour wraps the filled and empty cells only when asked for")
    func colour() {
        let bars = ProgressBars(width: 80, style: TerminalStyle(ascii: false, colour: true))
        #expect(bars.bar(50, of: 100, width: 2) == "▕\u{1B}[34m█\u{1B}[0m\u{1B}[90m░\u{1B}[0m▏")
    }

    @Test("percent stays under 100 until the end; clock and ETA formats")
    func figures() {
        #expect(ProgressBars.percent(999, of: 1000) == " 99%")
        #expect(ProgressBars.percent(1000, of: 1000) == "100%")
        #expect(ProgressBars.percent(7, of: 100) == "  7%")
        #expect(ProgressBars.percent(0, of: 0) == "100%")
        #expect(ProgressBars.clock(0) == "0:00")
        #expect(ProgressBars.clock(7.2) == "0:08")
        #expect(ProgressBars.clock(754) == "12:34")
        #expect(ProgressBars.clock(3723) == "1:02:03")
        #expect(ProgressBars.clock(.infinity) == "--:--")
    }

    @Test("names are cut by display width with an ellipsis; control characters shown as ?")
    func names() {
        #expect(ProgressBars.truncate("曲曲曲曲曲曲", to: 7, ascii: false) == "曲曲曲…")
        #expect(ProgressBars.truncate("abcdefghij", to: 6, ascii: true) == "abc...")
        #expect(ProgressBars.truncate("short", to: 6, ascii: true) == "short")
        let bars = ProgressBars(width: 100, style: Self.plain)
        let line = bars.fileLine(file("bad\nname\u{1B}[31m.m4a", size: 100, sent: 50))
        #expect(line.hasPrefix("  bad?name?[31m.m4a "))
    }

    @Test("at every width from 20 to 160 no line is wider than the terminal")
    func widths() {
        var snapshot = TransferProgress.Snapshot()
        snapshot.active = [
            file("a very long track name that goes on and on — 東京の夜 🎶 (extended mix).flac", size: 1 << 33, sent: 1 << 31),
            file("b.m4a", size: 1 << 20, sent: 1),
        ]
        snapshot.filesTotal = 12_345
        snapshot.filesDone = 9_999
        snapshot.filesFailed = 12
        snapshot.bytesTotal = 1 << 40
        snapshot.bytesDone = 1 << 39
        for width in 20...160 {
            for style in [Self.plain, Self.unicode] {
                for line in ProgressBars(width: width, style: style).lines(snapshot, rate: 123_456_789) {
                    #expect(TextColumns.displayWidth(line) <= width, "width \(width): \(line)")
                }
            }
        }
    }

    @Test("more files in flight than shown are counted on one line")
    func overflow() {
        var snapshot = TransferProgress.Snapshot()
        snapshot.active = [file("a", size: 1, sent: 0), file("b", size: 1, sent: 0), file("c", size: 1, sent: 0)]
        snapshot.filesTotal = 3
        snapshot.bytesTotal = 3
        let lines = ProgressBars(width: 80, style: Self.unicode, maxFiles: 2).lines(snapshot, rate: nil)
        #expect(lines.count == 4)
        #expect(lines[2] == "  … and 1 more in flight")
    }

    @Test("live counts: sent bytes, finished and failed files, skipped jobs")
    func liveCounts() {
        let progress = TransferProgress()
        let jobs = (0..<3).map {
            UploadJob(path: "/music/t\($0).m4a", bucket: "b", key: "t\($0).m4a", contentType: "audio/mp4", length: 100, mtimeNs: 0, createdAt: Date())
        }
        progress.expect(files: 3, bytes: 300)
        progress.started(jobs[0])
        progress.started(jobs[1])
        progress.sent(jobs[0].id, bytes: 40)
        progress.sent(jobs[1].id, bytes: 500)  // never past the file's size
        var snapshot = progress.snapshot()
        #expect(snapshot.active.map(\.name) == ["t0.m4a", "t1.m4a"])
        #expect(snapshot.bytesDone == 140)
        progress.finished(jobs[0], succeeded: true)
        progress.finished(jobs[1], succeeded: false)
        progress.skipped(jobs[2])
        snapshot = progress.snapshot()
        #expect(snapshot.active.isEmpty)
        #expect(snapshot.filesTotal == 2)
        #expect(snapshot.filesDone == 1)
        #expect(snapshot.filesFailed == 1)
        #expect(snapshot.bytesTotal == 100)
        #expect(snapshot.bytesDone == 100)
    }
}
