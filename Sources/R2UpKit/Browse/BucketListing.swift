public import Foundation
import R2UpModel
public import R2UpTransfer

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
    public func browse(prefix: String, recursive: Bool = false) async throws(S3ClientError) -> BucketListing {
        let start = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        let all = try await client.listAllObjects(bucket: bucket, prefix: start, delimiter: recursive ? nil : "/")
        return BucketListing(
            bucket: bucket, prefix: start, folders: all.commonPrefixes,
            objects: all.objects.map { ListedObject(key: $0.key, size: $0.size, lastModified: $0.lastModified, etag: $0.etag) })
    }
}

extension UploadService {
    /// Every object whose key starts with `prefix` as given (no "/" added), all pages: what `rm --prefix` deletes.
    public func objects(startingWith prefix: String) async throws(S3ClientError) -> [ListedObject] {
        try await client.listAllObjects(bucket: bucket, prefix: prefix).objects.map {
            ListedObject(key: $0.key, size: $0.size, lastModified: $0.lastModified, etag: $0.etag)
        }
    }
}

/// `r2up ls` for people: folders first ("DIR"), then objects with their date and size.
///
/// ```
/// 2026-11-22 21:04      DIR  Live/
/// 2026-11-22 21:04     1 KB  01 Intro.m4a
/// ```
/// Names are shown below the listed prefix; dates are local time to the minute.
public enum ListingTable {
    public static func lines(_ listing: BucketListing, timeZone: TimeZone = .current) -> [String] {
        let below = { (key: String) in TextColumns.printable(String(key.dropFirst(listing.prefix.count))) }
        let folders = listing.folders.map { ["", "DIR", below($0)] }
        let objects = listing.objects.map { object in
            [
                object.lastModified.map { HistoryTable.date($0, timeZone: timeZone) } ?? "",
                ByteCount.string(object.size), below(object.key),
            ]
        }
        return TextColumns.lines(folders + objects, alignments: [.left, .right, .left])
    }

    /// The last line: "2 folders, 3 objects, 4.1 MB".
    /// `recursive` (`ls -r`, which lists no folders): "3 objects, 4.1 MB in total".
    public static func summary(_ listing: BucketListing, recursive: Bool = false) -> String {
        let bytes = listing.objects.reduce(Int64(0)) { $0 + $1.size }
        func count(_ n: Int, _ noun: String) -> String { "\(SyncSummary.count(n)) \(noun)\(n == 1 ? "" : "s")" }
        if recursive { return "\(count(listing.objects.count, "object")), \(ByteCount.string(bytes)) in total" }
        return "\(count(listing.folders.count, "folder")), \(count(listing.objects.count, "object")), \(ByteCount.string(bytes))"
    }
}
