public import Foundation
import R2UpModel
package import R2UpTransfer

/// One level of a bucket under a prefix, as `r2up ls` shows it: the folders (common
/// prefixes at the next `/`) and the objects, across every page of ListObjectsV2.
public struct BucketListing: Sendable, Equatable, Encodable {
    public var bucket: String
    public var prefix: String
    /// Full prefixes, ending in "/".
    public var folders: [String]
    public var objects: [ListedObject]
}

/// An object in a listing.
public struct ListedObject: Sendable, Equatable, Encodable {
    public var key: String
    public var size: Int64
    public var lastModified: Date?
    public var etag: String
}

extension UploadService {
    /// Lists `prefix` one level deep (delimiter "/"), following continuation tokens to the end.
    /// A prefix naming a folder without its trailing "/" is read as that folder, as `aws s3 ls`
    /// does only when asked; here "Album" and "Album/" both list the folder's contents.
    /// `recursive` (`ls -r`): every object under the prefix, at any depth, and no folders.
    package func browse(prefix: String, recursive: Bool = false) async throws(S3ClientError) -> BucketListing {
        let start = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        let all = try await client.listAllObjects(bucket: bucket, prefix: start, delimiter: recursive ? nil : "/")
        return BucketListing(
            bucket: bucket, prefix: start, folders: all.commonPrefixes,
            objects: all.objects.map { ListedObject(key: $0.key, size: $0.size, lastModified: $0.lastModified, etag: $0.etag) })
    }
}

extension UploadService {
    /// Every object whose key starts with `prefix` as given (no "/" added), all pages: what `rm --prefix` deletes.
    package func objects(startingWith prefix: String) async throws(S3ClientError) -> [ListedObject] {
        try await client.listAllObjects(bucket: bucket, prefix: prefix).objects.map {
            ListedObject(key: $0.key, size: $0.size, lastModified: $0.lastModified, etag: $0.etag)
        }
    }
}
