import Foundation
import GRDB
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("The upload history")
struct HistoryStoreTests {
    @Test("an UploadItem goes in and comes out the same")
    func roundTrip() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let item = Sample.item("Cuban Linx 01.flac", key: "albums/Only Built 4/01 #1.flac", etag: nil)
        try store.recordUpload(item)
        #expect(try store.recentUploads(limit: 1) == [item])
        #expect(try store.upload(matching: item.id.uuidString) == item)
        #expect(try store.uploadCount() == 1)
    }

    @Test("history --json has exactly seed 002's keys plus bucket, etag, deletedAt and copiedFrom, with an ISO 8601 UTC date")
    func json() throws {
        let item = Sample.item("vacation.flac", key: "abc12345-vacation.flac", size: 2_048_576, etag: nil)
        let data = try HistoryEntry.json([HistoryEntry(item: item, deletedAt: nil)])
        let objects = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let object = try #require(objects.first)
        #expect(Set(object.keys) == ["id", "fileName", "fileSize", "r2Key", "uploadDate", "publicURL", "bucket", "etag", "deletedAt", "copiedFrom"])
        #expect(object["id"] as? String == item.id.uuidString)
        #expect(object["fileName"] as? String == "vacation.flac")
        #expect((object["fileSize"] as? NSNumber)?.int64Value == 2_048_576)
        #expect(object["r2Key"] as? String == "abc12345-vacation.flac")
        #expect(object["uploadDate"] as? String == "2025-06-15T15:06:40Z")
        #expect(object["publicURL"] as? String == "https://pub.example.com/abc12345-vacation.flac")
        #expect(object["bucket"] as? String == "tracks")
        #expect(object["etag"] is NSNull && object["deletedAt"] is NSNull && object["copiedFrom"] is NSNull)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.contains("\"https://pub.example.com/abc12345-vacation.flac\""))
    }

    @Test("the date stays ISO 8601 whatever the encoder's date strategy, and decodes back")
    func jsonDecodes() throws {
        let item = Sample.item(etag: "\"e\"")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = try encoder.encode(item)
        #expect(String(data: data, encoding: .utf8)?.contains("\"2025-06-15T15:06:40Z\"") == true)
        #expect(try JSONDecoder().decode(UploadItem.self, from: data) == item)
        let fractional = Data("""
            {"id":"\(item.id.uuidString)","fileName":"a","fileSize":1,"r2Key":"k","uploadDate":"2025-06-15T15:06:40.250Z",
             "publicURL":"https://x/k","bucket":"b","etag":null}
            """.utf8)
        let decoded = try JSONDecoder().decode(UploadItem.self, from: fractional)
        #expect(decoded.uploadDate == Sample.date.addingTimeInterval(0.25))
    }

    @Test("recent uploads come newest first, as many as asked")
    func recentOrder() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let items = (0..<30).map { index in
            Sample.item("\(index).flac", at: Sample.date.addingTimeInterval(Double((index * 7) % 30) * 60))
        }
        for item in items { try store.recordUpload(item) }
        let recent = try store.recentUploads(limit: 20)
        #expect(recent.count == 20)
        #expect(recent == items.sorted { $0.uploadDate > $1.uploadDate }.prefix(20).map { $0 })
        #expect(try store.recentUploads(limit: 100).count == 30)
        #expect(try store.recentUploads(limit: 0).isEmpty)
        #expect(try store.uploadCount() == 30)
    }

    @Test("copy-url finds an upload by id, else key, else file name or path; the newest wins")
    func matching() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let old = Sample.item("song.flac", key: "a/song.flac", at: Sample.date)
        let new = Sample.item("song.flac", key: "b/song.flac", at: Sample.date.addingTimeInterval(60))
        let other = Sample.item("other.flac", key: "song.flac", at: Sample.date.addingTimeInterval(-60))
        for item in [old, new, other] { try store.recordUpload(item) }
        #expect(try store.upload(matching: old.id.uuidString) == old)
        #expect(try store.upload(matching: old.id.uuidString.lowercased()) == old)
        #expect(try store.upload(matching: "a/song.flac") == old)
        #expect(try store.upload(matching: "song.flac") == other)  // a key match comes before a name match
        #expect(try store.upload(matching: "/home/me/music/other.flac") == other)
        #expect(try store.upload(matching: "/home/me/song.flac") == new)
        #expect(try store.upload(matching: "missing.flac") == nil)
    }

    @Test("history rows cannot be changed; writing the same id twice fails")
    func immutable() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let item = Sample.item()
        try store.recordUpload(item)
        #expect(throws: DatabaseError.self) {
            try store.rawWrite { db in try db.execute(sql: "UPDATE history SET publicURL = 'https://evil'") }
        }
        #expect(throws: StoreError.self) { try store.recordUpload(item) }
        #expect(try store.recentUploads(limit: 5) == [item])
    }

    @Test("the recent-uploads query walks the uploadDate index, not the whole table")
    func usesIndex() throws {
        let folder = try ScratchFolder()
        let store = try folder.store()
        let plan = try store.rawRead { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Store.recentUploadsSQL, arguments: [20])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("history_on_uploadDate") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
