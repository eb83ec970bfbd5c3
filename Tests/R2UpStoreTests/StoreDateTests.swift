import Foundation
import GRDB
import Testing
@testable import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

/// The store's hand-written date text matches GRDB's own, so rows sort the same whoever wrote them.
@Suite("Store dates")
struct StoreDateTests {
    @Test("same text as GRDB", arguments: [0, 1_700_000_000.123, 1_798_000_000.9999, 951_782_400.5, -1.25])
    func matchesGRDB(seconds: TimeInterval) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let grdb = try #require(String.fromDatabaseValue(date.databaseValue))
        #expect(StoreDate.text(date) == grdb)
    }

    /// Read by hand without Foundation's calendar, to the same bits as GRDB reads it: every
    /// shape r2up, sqlite's strftime and the benchmarks write, over two centuries and leap days.
    @Test("the written shapes read back as GRDB reads them, to the bit")
    func readsAsGRDB() throws {
        var checked = 0
        var seconds = -2_208_988_800.0  // 1900-01-01
        while seconds < 4_102_444_800 {  // 2100-01-01
            let text = StoreDate.text(Date(timeIntervalSince1970: seconds))
            let whole = String(text.prefix(19))
            for shape in [text, whole, whole + "Z", text + "Z", whole.replacingOccurrences(of: " ", with: "T") + "Z",
                text + "456789", whole + ".5", whole + ".05", String(text.dropLast())]
            {
                let grdb = try #require(Date.fromDatabaseValue(shape.databaseValue))
                let read = try #require(StoreDate.date(shape), "\(shape)")
                #expect(read.timeIntervalSinceReferenceDate.bitPattern == grdb.timeIntervalSinceReferenceDate.bitPattern, "\(shape)")
                checked += 1
            }
            seconds += 86_400 * 7.31 + 0.001 * Double(checked % 1000)
        }
        #expect(checked > 80_000)
        for leap in ["2000-02-29 12:00:00.000", "2024-02-29 23:59:59.999", "2100-02-28 00:00:00.001"] {
            #expect(StoreDate.date(leap) == Date.fromDatabaseValue(leap.databaseValue))
        }
    }

    @Test("other shapes are left to GRDB", arguments: [
        "2026-11-24", "2026-11-24 10:00", "2026-11-24T10:00:00+01:00", "1582-10-10 00:00:00", "2026-02-29 00:00:00",
        "2026-13-01 00:00:00", "2026-11-24 00:00:00.", "2026-11-24 00:00:00.5x", "2026-11-24 24:00:00", "2026-1-24 00:00:00", "x",
    ])
    func otherShapes(text: String) {
        #expect(StoreDate.date(text) == nil)
    }

    @Test("a row with a date in another shape still reads, as GRDB reads it")
    func fallsBack() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        try store.rawWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO tracks (path, size, mtimeNs, updatedAt) VALUES
                    ('/m/a.flac', 1, 1, '2026-11-24T10:00:00+01:00'), ('/m/b.flac', 1, 1, '2026-11-24 09:00:00.25Z')
                    """)
        }
        let dates = try store.tracks(under: "/m").map(\.updatedAt.timeIntervalSince1970)
        #expect(dates == [1_795_510_800, 1_795_510_800.25])
    }
}
