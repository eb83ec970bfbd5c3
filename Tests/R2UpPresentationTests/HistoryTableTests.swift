import Foundation
import Testing
@testable import R2UpKit
@testable import R2UpStore
@testable import r2up

@Suite("History table for people")
struct HistoryTableTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func item(_ key: String, size: Int64, at seconds: TimeInterval) -> UploadItem {
        UploadItem(
            fileName: key, fileSize: size, r2Key: key, uploadDate: Date(timeIntervalSince1970: seconds),
            publicURL: URL(string: "https://p.example/\(key)")!, bucket: "b", etag: nil)
    }

    @Test("dates are local time to the minute, zero-padded, with their zone, in any time zone")
    func date() {
        let date = Date(timeIntervalSince1970: 1_795_381_445)  // 2026-11-22 21:04:05 UTC
        #expect(HistoryTable.date(date, timeZone: Self.utc) == "2026-11-22 21:04 UTC")
        #expect(HistoryTable.date(date, timeZone: TimeZone(identifier: "Asia/Tokyo")!) == "2026-11-23 06:04 +09:00")
        #expect(HistoryTable.date(date, timeZone: TimeZone(identifier: "Asia/Kolkata")!) == "2026-11-23 02:34 +05:30")
        #expect(HistoryTable.date(date, timeZone: TimeZone(identifier: "America/St_Johns")!) == "2026-11-22 17:34 -03:30")
        #expect(HistoryTable.date(Date(timeIntervalSince1970: 0), timeZone: Self.utc) == "1970-01-01 00:00 UTC")
    }

    @Test("the zone follows daylight saving time")
    func daylightSaving() {
        let winter = Date(timeIntervalSince1970: 1_795_381_445)  // 2026-11-22 21:04:05 UTC
        let summer = Date(timeIntervalSince1970: 1_782_000_000)  // 2026-06-21 00:00:00 UTC
        let paris = TimeZone(identifier: "Europe/Paris")!
        #expect(ZonedTime.text(winter, timeZone: paris) == "2026-11-22 22:04 +01:00")
        #expect(ZonedTime.text(summer, timeZone: paris) == "2026-06-21 02:00 +02:00")
        #expect(ZonedTime.text(winter, timeZone: paris, precision: .second) == "2026-11-22 22:04:05 +01:00")
        #expect(ZonedTime.text(winter, timeZone: paris, precision: .clock) == "22:04:05 +01:00")
    }

    @Test("header, right-aligned sizes, keys aligned by display width")
    func lines() {
        let lines = HistoryTable.lines(
            [Self.item("日本.flac", size: 1_073_741_824, at: 60), Self.item("a.m4a", size: 500, at: 0)], timeZone: Self.utc)
        #expect(lines == [
            "DATE                       SIZE  KEY        URL",
            "1970-01-01 00:01 UTC       1 GB  日本.flac  https://p.example/%E6%97%A5%E6%9C%AC.flac",
            "1970-01-01 00:00 UTC  500 bytes  a.m4a      https://p.example/a.m4a",
        ])
    }

    @Test("emoji sequences and CJK keep the columns straight; a deleted object's URL says when")
    func emojiAndDeleted() {
        let family = Self.item("👨‍👩‍👧.m4a", size: 1, at: 120)
        let heart = Self.item("❤️ 歌.m4a", size: 1, at: 60)
        let lines = HistoryTable.lines([family, heart], deleted: [heart.id: Date(timeIntervalSince1970: 180)], timeZone: Self.utc)
        #expect(lines == [
            "DATE                    SIZE  KEY        URL",
            "1970-01-01 00:02 UTC  1 byte  👨‍👩‍👧.m4a     https://p.example/%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7.m4a",
            "1970-01-01 00:01 UTC  1 byte  ❤️ 歌.m4a  (deleted 1970-01-01 00:03 UTC)",
        ])
    }

    @Test("a server-side copy (a moved track) says which key it was copied from")
    func copyRow() {
        let copy = UploadItem(
            fileName: "a.m4a", fileSize: 500, r2Key: "new/a.m4a", uploadDate: Date(timeIntervalSince1970: 60),
            publicURL: URL(string: "https://p.example/new/a.m4a")!, bucket: "b", etag: "e", copiedFrom: "old/a\u{1B}.m4a")
        #expect(HistoryTable.lines([copy], timeZone: Self.utc) == [
            "DATE                       SIZE  KEY        URL",
            "1970-01-01 00:01 UTC  500 bytes  new/a.m4a  https://p.example/new/a.m4a (copy of old/a?.m4a)",
        ])
    }
}
