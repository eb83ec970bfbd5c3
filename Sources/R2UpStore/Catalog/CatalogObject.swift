public import Foundation

/// What the catalog knows of one object: the listing's ETag and a HEAD's details.
public struct CatalogObject: Sendable, Equatable, Codable {
    public var etag: String
    public var size: Int64
    public var contentType: String?
    public var lastModified: Date?
    public var metadata: [String: String]

    package init(etag: String, size: Int64, contentType: String? = nil, lastModified: Date? = nil, metadata: [String: String]) {
        self.etag = etag
        self.size = size
        self.contentType = contentType
        self.lastModified = lastModified
        self.metadata = metadata
    }
}
