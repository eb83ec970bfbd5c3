import Foundation
internal import GRDB
import R2UpModel

extension Row {
    /// A date column as the store writes it, read by `StoreDate.date`; any other shape (and a
    /// missing value, with GRDB's error) through GRDB's own reading.
    func storeDate(forColumn column: String) throws -> Date {
        if let date = try writtenDate(column) { return date }
        return try decode(Date.self, forColumn: column)
    }

    /// The same for a column that may be NULL.
    func optionalStoreDate(forColumn column: String) throws -> Date? {
        if let date = try writtenDate(column) { return date }
        return try decode(Date?.self, forColumn: column)
    }

    private func writtenDate(_ column: String) throws -> Date? {
        guard case .string(let text) = try decode(DatabaseValue.self, forColumn: column).storage else { return nil }
        return StoreDate.date(text)
    }
}
