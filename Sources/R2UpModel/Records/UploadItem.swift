public import Foundation

/// One finished upload: a row of `history` (seed 002's UploadItem), never changed once written.
///
/// Its JSON has exactly the keys `id`, `fileName`, `fileSize`, `r2Key`, `uploadDate`
/// (ISO 8601 UTC, e.g. "2024-03-15T12:30:45Z"), `publicURL`, `bucket` and `etag`
/// (null when unknown), whatever the encoder's date strategy.
public struct UploadItem: Sendable, Equatable, Identifiable {
    public let id: UUID
    /// The file's name, without its folder.
    public let fileName: String
    public let fileSize: Int64
    /// The object key.
    public let r2Key: String
    /// When the upload completed.
    public let uploadDate: Date
    public let publicURL: URL
    public let bucket: String
    public let etag: String?
    /// The key this object was copied from inside the bucket (a moved track), nil for an
    /// upload. Not in the item's JSON (seed 002's keys are fixed): `history --json` adds it.
    public let copiedFrom: String?

    /// - Parameters:
    ///   - id: a new UUID unless given.
    ///   - fileName: the file's name, without its folder.
    ///   - fileSize: bytes.
    ///   - r2Key: the object key.
    ///   - uploadDate: when the upload completed (stored to the millisecond).
    ///   - publicURL: where the object can be fetched.
    ///   - bucket: the bucket.
    ///   - etag: the object's ETag.
    public init(
        id: UUID = .randomVersion4(), fileName: String, fileSize: Int64, r2Key: String, uploadDate: Date, publicURL: URL,
        bucket: String, etag: String?, copiedFrom: String? = nil
    ) {
        self.id = id
        self.fileName = fileName
        self.fileSize = fileSize
        self.r2Key = r2Key
        self.uploadDate = uploadDate
        self.publicURL = publicURL
        self.bucket = bucket
        self.etag = etag
        self.copiedFrom = copiedFrom
    }

    /// The size for people: "2.4 MB".
    public var formattedFileSize: String { ByteCount.string(fileSize) }

    /// `uploadDate` as ISO 8601 UTC to the second, as the JSON carries it.
    public var uploadDateText: String { uploadDate.formatted(Self.isoFormat) }

    static let isoFormat = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!)
    static let isoFormatWithFraction = Date.ISO8601FormatStyle(
        includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!)
}

/// A history row as `history --json` prints it: the upload's fields and `deletedAt`
/// (when `r2up rm` deleted the object since; null otherwise).
public struct HistoryEntry: Encodable, Sendable {
    public var item: UploadItem
    public var deletedAt: Date?

    public init(item: UploadItem, deletedAt: Date?) {
        self.item = item
        self.deletedAt = deletedAt
    }

    private enum CodingKeys: String, CodingKey { case deletedAt, copiedFrom }

    public func encode(to encoder: any Encoder) throws {
        try item.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deletedAt.map { $0.formatted(UploadItem.isoFormat) }, forKey: .deletedAt)
        try container.encode(item.copiedFrom, forKey: .copiedFrom)
    }

    /// Encodes entries as `history --json` prints them: an array, keys sorted, slashes unescaped.
    public static func json(_ entries: [HistoryEntry]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return try encoder.encode(entries)
    }
}

extension UploadItem: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, fileName, fileSize, r2Key, uploadDate, publicURL, bucket, etag
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .uploadDate)
        guard let date = (try? Date(text, strategy: Self.isoFormat)) ?? (try? Date(text, strategy: Self.isoFormatWithFraction))
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .uploadDate, in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        self.init(
            id: try container.decode(UUID.self, forKey: .id),
            fileName: try container.decode(String.self, forKey: .fileName),
            fileSize: try container.decode(Int64.self, forKey: .fileSize),
            r2Key: try container.decode(String.self, forKey: .r2Key),
            uploadDate: date,
            publicURL: try container.decode(URL.self, forKey: .publicURL),
            bucket: try container.decode(String.self, forKey: .bucket),
            etag: try container.decodeIfPresent(String.self, forKey: .etag))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.uuidString, forKey: .id)
        try container.encode(fileName, forKey: .fileName)
        try container.encode(fileSize, forKey: .fileSize)
        try container.encode(r2Key, forKey: .r2Key)
        try container.encode(uploadDateText, forKey: .uploadDate)
        try container.encode(publicURL.absoluteString, forKey: .publicURL)
        try container.encode(bucket, forKey: .bucket)
        try container.encode(etag, forKey: .etag)  // null rather than missing: the keys are fixed
    }
}
