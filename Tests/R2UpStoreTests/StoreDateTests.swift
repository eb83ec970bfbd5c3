import Foundation
import GRDB
import Testing
@testable import R2UpModel

/// The store's hand-written date text matches GRDB's own, so rows sort the same whoever wrote them.
@Suite("Store dates")
struct StoreDateTests {
    @Test("same text as GRDB", arguments: [0, 1_700_000_000.123, 1_798_000_000.9999, 951_782_400.5, -1.25])
    func matchesGRDB(seconds: TimeInterval) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let grdb = try #require(String.fromDatabaseValue(date.databaseValue))
        #expect(StoreDate.text(date) == grdb)
    }
}
