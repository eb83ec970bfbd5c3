import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpStore
@testable import r2up

@Suite("Queue HUD (queue --watch)")
struct QueueHUDTests {
    static let unicode = TerminalStyle(ascii: false, colour: false)
    static let ascii = TerminalStyle(ascii: true, colour: false)
    static let utc = TimeZone(identifier: "UTC")!
    static let mebibyte: Int64 = 1_048_576
    /// 2026-11-24 14:03:07 UTC.
    static let time = Date(timeIntervalSince1970: 1_795_528_987)

    static func entry(
        _ key: String, size: Int64, sent: Int64 = 0, state: UploadJobState = .staged, error: String? = nil, next: Date? = nil,
        id: UUID = UUID()
    ) -> QueueReport.Entry {
        var job = UploadJob(
            id: id, path: "/music/" + key, bucket: "b", key: key, contentType: "audio/flac", length: size, mtimeNs: 0,
            createdAt: time)
        job.state = state
        job.bytesSent = sent
        job.lastError = error
        job.nextAttemptAt = next
        return QueueReport.Entry(job, leaseIsLive: false)
    }

    static func report(
        uploading: [QueueReport.Entry] = [], upNext: [QueueReport.Entry] = [], failed: [QueueReport.Entry] = [],
        interrupted: [QueueReport.Entry] = []
    ) -> QueueReport {
        var report = QueueReport.empty
        report.uploading = uploading
        report.upNext = upNext
        report.failed = failed
        report.interrupted = interrupted
        report.counts = .init(queued: upNext.count, uploading: uploading.count, interrupted: interrupted.count, failed: failed.count)
        return report
    }

    static let failedID = UUID(uuidString: "1CB3A283-0000-4000-8000-000000000000")!

    @Test("the rate is the growth between two reports; nil from one; a restarted upload starts over")
    func ratesFromSnapshots() {
        let id = UUID()
        var rates = QueueRates(window: 5)
        var first = Self.report(uploading: [Self.entry("a.flac", size: 10 * Self.mebibyte, sent: Self.mebibyte, state: .uploading, id: id)])
        rates.update(&first, at: Self.time)
        #expect(first.uploading[0].bytesPerSecond == nil)
        var second = Self.report(uploading: [Self.entry("a.flac", size: 10 * Self.mebibyte, sent: 3 * Self.mebibyte, state: .uploading, id: id)])
        rates.update(&second, at: Self.time.addingTimeInterval(2))
        #expect(second.uploading[0].bytesPerSecond == 1_048_576)
        // The store's bytes move once a second: a report that saw no change keeps the window's rate.
        var third = Self.report(uploading: [Self.entry("a.flac", size: 10 * Self.mebibyte, sent: 3 * Self.mebibyte, state: .uploading, id: id)])
        rates.update(&third, at: Self.time.addingTimeInterval(4))
        #expect(third.uploading[0].bytesPerSecond == 524_288)
        // Samples older than the window go: 2 s → 7 s only.
        var fourth = Self.report(uploading: [Self.entry("a.flac", size: 10 * Self.mebibyte, sent: 8 * Self.mebibyte, state: .uploading, id: id)])
        rates.update(&fourth, at: Self.time.addingTimeInterval(7))
        #expect(fourth.uploading[0].bytesPerSecond == Double(5 * Self.mebibyte) / 5)
        // Started over (a new multipart upload): no rate until it moves again.
        var restarted = Self.report(uploading: [Self.entry("a.flac", size: 10 * Self.mebibyte, sent: 0, state: .uploading, id: id)])
        rates.update(&restarted, at: Self.time.addingTimeInterval(8))
        #expect(restarted.uploading[0].bytesPerSecond == nil)
    }

    @Test("the whole HUD at 80 columns: counts, uploading with bar, bytes and rate, up next with +N more, failed with reason")
    func wholeHUD() {
        var report = Self.report(
            uploading: [
                Self.entry("Album/01 Intro.flac", size: 10 * Self.mebibyte, sent: 4 * Self.mebibyte, state: .uploading),
                Self.entry("Album/02 Night Drive.flac", size: 2 * Self.mebibyte, sent: 2 * Self.mebibyte, state: .verifying),
            ],
            upNext: (3...9).map { Self.entry("Album/0\($0).flac", size: Int64($0) * Self.mebibyte) },
            failed: [Self.entry("Demo.wav", size: 100, state: .failedPermanent, error: "access denied (403)", id: Self.failedID)])
        report.uploading[0].bytesPerSecond = 1_153_434
        let lines = QueueHUD(width: 80, height: 40, style: Self.unicode, timeZone: Self.utc).lines(report, at: Self.time)
        #expect(
            lines == [
                "Queue at 14:03:07 UTC",
                "7 queued · 1 uploading · 1 verifying · 1 failed",
                "",
                "Uploading now · 1.1 MB/s",
                "  ⇡ Album/01 Intro.flac        ▕██████▍░░░░░░░░░▏   40%  4 MB / 10 MB  1.1 MB/s",
                "  ⇡ Album/02 Night Drive.flac  ▕████████████████▏  100%  2 MB / 2 MB  verifying",
                "",
                "Up next",
                "  1. Album/03.flac  3 MB",
                "  2. Album/04.flac  4 MB",
                "  3. Album/05.flac  5 MB",
                "  4. Album/06.flac  6 MB",
                "  5. Album/07.flac  7 MB",
                "  +2 more",
                "",
                "Failed",
                "  ⚠ Demo.wav (1cb3a283): access denied (403); waits for r2up retry",
            ])
        #expect(lines.allSatisfy { TextColumns.displayWidth($0) <= 80 })
    }

    @Test("a narrow terminal: the bar goes, names are cut by display width, control characters show as ?")
    func narrow() {
        let report = Self.report(
            uploading: [Self.entry("日本語の曲名がとても長い.flac", size: 10 * Self.mebibyte, sent: 5 * Self.mebibyte, state: .uploading)],
            upNext: [Self.entry("bad\u{1B}[31mname.flac", size: 1000)],
            failed: [Self.entry("x.flac", size: 1, state: .failedRetryable, error: "line one\nline two", id: Self.failedID)])
        let lines = QueueHUD(width: 30, height: nil, style: Self.unicode, timeZone: Self.utc).lines(report, at: Self.time)
        #expect(
            lines == [
                "Queue at 14:03:07 UTC",
                "1 queued · 1 uploading · 1 fa…",
                "",
                "Uploading now",
                "  ⇡  50%  日本語の曲名がとて…",
                "",
                "Up next",
                "  1. bad?[31mname…  1000 bytes",
                "",
                "Failed",
                "  ⚠ x.flac (1cb3a283): line o…",
            ])
        #expect(lines.allSatisfy { TextColumns.displayWidth($0) <= 30 })
        #expect(!lines.joined().contains("\u{1B}") && !lines.joined().contains("\n"))
    }

    @Test("a short terminal: sections give up rows (counted on +N more), then blank lines, never more lines than the height")
    func short() {
        let report = Self.report(
            uploading: (1...3).map { Self.entry("up\($0).flac", size: 100, sent: 50, state: .uploading) },
            upNext: (1...9).map { Self.entry("next\($0).flac", size: 100) },
            failed: (1...4).map { Self.entry("bad\($0).flac", size: 100, state: .failedPermanent, error: "gone", id: Self.failedID) })
        let hud = QueueHUD(width: 60, height: 12, style: Self.ascii, timeZone: Self.utc)
        let lines = hud.lines(report, at: Self.time)
        #expect(
            lines == [
                "Queue at 14:03:07 UTC",
                "9 queued · 3 uploading · 4 failed",
                "Uploading now",
                "  * up1.flac  [######------]   50%  50 bytes / 100 bytes",
                "  * up2.flac  [######------]   50%  50 bytes / 100 bytes",
                "  * up3.flac  [######------]   50%  50 bytes / 100 bytes",
                "Up next",
                "  1. next1.flac  100 bytes",
                "  +8 more",
                "Failed",
                "  ! bad1.flac (1cb3a283): gone; waits for r2up retry",
                "  +3 more",
            ])
        for height in 1...30 {
            let lines = QueueHUD(width: 60, height: height, style: Self.ascii, timeZone: Self.utc).lines(report, at: Self.time)
            #expect(lines.count <= height, "height \(height): \(lines)")
            #expect(lines.first == "Queue at 14:03:07 UTC")
        }
    }

    @Test("interrupted uploads are counted and listed with their bytes; multipart uploads left on the server are said")
    func interrupted() {
        var report = Self.report(
            interrupted: [Self.entry("Live/Set.wav", size: 30 * Self.mebibyte, sent: 16 * Self.mebibyte, state: .initiated)])
        report.leftOnServer = 2
        let lines = QueueHUD(width: 100, height: 24, style: Self.unicode, timeZone: Self.utc).lines(report, at: Self.time)
        #expect(
            lines == [
                "Queue at 14:03:07 UTC",
                "0 queued · 0 uploading · 1 interrupted · 0 failed",
                "",
                "Interrupted (resumes on the next run)",
                "  Live/Set.wav  16 MB of 30 MB",
                "",
                "2 abandoned multipart uploads left on the server; the next run aborts them",
            ])
    }

    @Test("off a terminal nothing is cut: full names, reasons and a 20-column bar")
    func plain() {
        let long = String(repeating: "very long name ", count: 8) + ".flac"
        let report = Self.report(
            uploading: [Self.entry(long, size: 4, sent: 1, state: .uploading)],
            failed: [Self.entry("x.flac", size: 1, state: .failedRetryable, error: String(repeating: "why ", count: 40), id: Self.failedID)])
        let lines = QueueHUD(width: nil, height: nil, style: Self.ascii, timeZone: Self.utc).lines(report, at: Self.time)
        #expect(lines[0] == "Queue at 2026-11-24 14:03:07 UTC")
        #expect(lines[4] == "  * \(long)  [#####---------------]   25%  1 byte / 4 bytes")
        #expect(lines[7] == "  ! x.flac (1cb3a283): \(String(repeating: "why ", count: 40)); retried on the next run")
    }

    @Test("the clock and every date carry the zone the HUD runs in (issue 29 item 8)")
    func zone() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let report = Self.report(
            failed: [Self.entry("f.flac", size: 1, state: .failedRetryable, error: "SlowDown", next: Self.time.addingTimeInterval(600), id: Self.failedID)])
        let screen = QueueHUD(width: 100, height: 24, style: Self.unicode, timeZone: tokyo).lines(report, at: Self.time)
        #expect(screen.first == "Queue at 23:03:07 +09:00")
        #expect(screen.contains { $0.hasSuffix("next attempt 2026-11-24 23:13 +09:00") }, "\(screen)")
        let log = QueueHUD(width: nil, height: nil, style: Self.ascii, timeZone: tokyo).lines(report, at: Self.time)
        #expect(log.first == "Queue at 2026-11-24 23:03:07 +09:00")
        #expect(QueueListing(timeZone: tokyo).lines(report).last == "  ⚠ f.flac (1cb3a283): SlowDown; next attempt 2026-11-24 23:13 +09:00")
    }
}

@Suite("Queue listing (plain r2up queue)")
struct QueueListingTests {
    @Test("every section, exact text: in flight with its phase, interrupted, up next, failed and when it is tried again")
    func sections() {
        let mebibyte = QueueHUDTests.mebibyte
        let interruptedID = UUID(uuidString: "9A1F00C2-0000-4000-8000-000000000000")!
        var copy = QueueHUDTests.entry("new/a.flac", size: 2 * mebibyte)
        copy.copyOf = "old/a.flac"
        let report = QueueHUDTests.report(
            uploading: [
                QueueHUDTests.entry("b.flac", size: 10 * mebibyte, sent: 5 * mebibyte, state: .uploading),
                QueueHUDTests.entry("c\u{7}.flac", size: 4 * mebibyte, sent: 4 * mebibyte, state: .verifying),
            ],
            upNext: [copy, QueueHUDTests.entry("d.flac", size: 1_000)],
            failed: [
                QueueHUDTests.entry("e.flac", size: 1, state: .failedPermanent, error: "AccessDenied", id: QueueHUDTests.failedID),
                QueueHUDTests.entry(
                    "f.flac", size: 1, state: .failedRetryable, error: "SlowDown",
                    next: QueueHUDTests.time.addingTimeInterval(600), id: QueueHUDTests.failedID),
            ],
            interrupted: [QueueHUDTests.entry("g.flac", size: 3 * mebibyte, sent: mebibyte, state: .uploading, id: interruptedID)])
        #expect(QueueListing(timeZone: QueueHUDTests.utc).lines(report) == [
            "2 queued · 2 uploading · 1 interrupted · 2 failed",
            "",
            "Uploading now",
            "  ↑ b.flac  \(ByteCount.string(5 * mebibyte)) of \(ByteCount.string(10 * mebibyte)) (50%)",
            "  ↑ c?.flac  \(ByteCount.string(4 * mebibyte)) of \(ByteCount.string(4 * mebibyte)) (100%, verifying)",
            "",
            "Interrupted (resumes on the next run)",
            "  g.flac  \(ByteCount.string(mebibyte)) of \(ByteCount.string(3 * mebibyte)) (9a1f00c2)",
            "",
            "Up next",
            "  1. new/a.flac (copy of old/a.flac)  \(ByteCount.string(2 * mebibyte))",
            "  2. d.flac  \(ByteCount.string(1_000))",
            "",
            "Failed",
            "  ⚠ e.flac (1cb3a283): AccessDenied; waits for r2up retry",
            "  ⚠ f.flac (1cb3a283): SlowDown; next attempt 2026-11-24 14:13 UTC",
        ])
    }

    @Test("an empty queue is one line")
    func empty() {
        #expect(QueueListing(timeZone: QueueHUDTests.utc).lines(.empty) == ["0 queued · 0 uploading · 0 failed"])
    }
}
