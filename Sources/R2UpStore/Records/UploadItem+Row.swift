import Foundation
public import GRDB
public import R2UpModel

// The row mapping is written out, not derived from Codable: the JSON form of the date is
// for people, while the column keeps GRDB's sortable "yyyy-MM-dd HH:mm:ss.SSS" UTC text.
extension UploadItem: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "history"

    public init(row: Row) throws {
        let idText: String = try row.decode(forColumn: "id")
        let urlText: String = try row.decode(forColumn: "publicURL")
        guard let id = UUID(uuidString: idText), let url = URL(string: urlText) else {
            throw StoreError.corrupt(path: "history", reason: "bad id or URL in row \(idText)")
        }
        self.init(
            id: id,
            fileName: try row.decode(forColumn: "fileName"),
            fileSize: try row.decode(forColumn: "fileSize"),
            r2Key: try row.decode(forColumn: "r2Key"),
            uploadDate: try row.storeDate(forColumn: "uploadDate"),
            publicURL: url,
            bucket: try row.decode(forColumn: "bucket"),
            etag: try row.decode(String?.self, forColumn: "etag"),
            copiedFrom: row.hasColumn("copiedFrom") ? try row.decode(String?.self, forColumn: "copiedFrom") : nil)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id.uuidString
        container["fileName"] = fileName
        container["fileSize"] = fileSize
        container["r2Key"] = r2Key
        container["uploadDate"] = StoreDate.text(uploadDate)
        container["publicURL"] = publicURL.absoluteString
        container["bucket"] = bucket
        container["etag"] = etag
        container["copiedFrom"] = copiedFrom
    }
}
