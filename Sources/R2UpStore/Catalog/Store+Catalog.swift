import Foundation
internal import GRDB

extension Store {
    /// The cached HEAD details of a bucket's objects under a prefix, by key.
    public func catalogObjects(bucket: String, prefix: String) throws(StoreError) -> [String: CatalogObject] {
        try read { db in
            var result: [String: CatalogObject] = [:]
            let rows = try Row.fetchCursor(
                db, sql: #"SELECT "key", etag, size, contentType, lastModified, metadata FROM catalog_objects WHERE bucket = ? AND substr("key", 1, ?) = ?"#,
                arguments: [bucket, prefix.utf8.count, prefix])
            while let row = try rows.next() {
                let key: String = row["key"]
                let metadataText: String = row["metadata"]
                let metadata = Self.stringMap(json: metadataText)
                    ?? (try? JSONDecoder().decode([String: String].self, from: Data(metadataText.utf8))) ?? [:]
                let modified: Double? = row["lastModified"]
                result[key] = CatalogObject(
                    etag: row["etag"], size: row["size"], contentType: row["contentType"],
                    lastModified: modified.map { Date(timeIntervalSince1970: $0) }, metadata: metadata)
            }
            return result
        }
    }

    /// The local files of tracks uploaded to `bucket` under a prefix, by key (for `catalog
    /// publish` to find their album art on this machine).
    public func localPaths(bucket: String, prefix: String) throws(StoreError) -> [String: String] {
        try read { db in
            var result: [String: String] = [:]
            let rows = try Row.fetchCursor(
                db, sql: #"SELECT "key", path FROM tracks WHERE bucket = ? AND "key" IS NOT NULL AND substr("key", 1, ?) = ?"#,
                arguments: [bucket, prefix.utf8.count, prefix])
            while let row = try rows.next() { result[row["key"]] = row["path"] }
            return result
        }
    }

    /// Records what HEADs told, and forgets objects that are gone, in one transaction.
    public func updateCatalogObjects(bucket: String, saving: [String: CatalogObject], removing: [String]) throws(StoreError) {
        guard !saving.isEmpty || !removing.isEmpty else { return }
        try write { db in
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO catalog_objects (bucket, "key", etag, size, contentType, lastModified, metadata)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            for (key, object) in saving {
                let metadata = Self.json(stringMap: object.metadata)
                try upsert.execute(arguments: [
                    bucket, key, object.etag, object.size, object.contentType,
                    object.lastModified?.timeIntervalSince1970, metadata,
                ])
            }
            let delete = try db.cachedStatement(sql: #"DELETE FROM catalog_objects WHERE bucket = ? AND "key" = ?"#)
            for key in removing { try delete.execute(arguments: [bucket, key]) }
        }
    }

    /// The metadata column: a JSON object of strings, keys sorted by their bytes, `"`, `\\` and
    /// control characters escaped, without `JSONEncoder` (which took most of saving 10,000 rows).
    static func json(stringMap: [String: String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        func append(_ text: String) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        for (index, key) in stringMap.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            append(key)
            out.append(UInt8(ascii: ":"))
            append(stringMap[key] ?? "")
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// A JSON object of strings, as `json(stringMap:)` (or before it `JSONEncoder`) wrote the
    /// metadata column, read without `JSONDecoder` (a tenth of its time over 10,000 rows); nil
    /// for anything else (the caller then asks `JSONDecoder`).
    static func stringMap(json: String) -> [String: String]? {
        var text = json
        return text.withUTF8 { bytes -> [String: String]? in
            var index = 0
            func skipSpace() {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
            }
            func hex4() -> UInt32? {
                guard index + 4 <= bytes.count else { return nil }
                var value: UInt32 = 0
                for byte in bytes[index..<index + 4] {
                    let digit: UInt8
                    switch byte {
                    case 0x30...0x39: digit = byte - 0x30
                    case 0x41...0x46: digit = byte - 0x41 + 10
                    case 0x61...0x66: digit = byte - 0x61 + 10
                    default: return nil
                    }
                    value = value << 4 | UInt32(digit)
                }
                index += 4
                return value
            }
            func string() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                var out: [UInt8] = []
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    switch byte {
                    case UInt8(ascii: "\""):
                        return String(validating: out, as: UTF8.self)
                    case UInt8(ascii: "\\"):
                        guard index < bytes.count else { return nil }
                        let escaped = bytes[index]
                        index += 1
                        switch escaped {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                        case UInt8(ascii: "b"): out.append(0x08)
                        case UInt8(ascii: "f"): out.append(0x0C)
                        case UInt8(ascii: "n"): out.append(0x0A)
                        case UInt8(ascii: "r"): out.append(0x0D)
                        case UInt8(ascii: "t"): out.append(0x09)
                        case UInt8(ascii: "u"):
                            guard var code = hex4() else { return nil }
                            if (0xD800...0xDBFF).contains(code) {
                                // A high surrogate must be followed by \u and a low one.
                                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                                index += 2
                                guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            }
                            guard let scalar = Unicode.Scalar(code) else { return nil }
                            out.append(contentsOf: String(Character(scalar)).utf8)
                        default:
                            return nil
                        }
                    case 0..<0x20:
                        return nil
                    default:
                        out.append(byte)
                    }
                }
                return nil
            }
            var map: [String: String] = [:]
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard let name = string() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipSpace()
                    guard let value = string(), map.updateValue(value, forKey: name) == nil else { return nil }
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    index += 1
                    if bytes[index - 1] == UInt8(ascii: "}") { break }
                    guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
                }
            }
            skipSpace()
            return index == bytes.count ? map : nil
        }
    }
}
