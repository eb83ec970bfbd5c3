import Foundation
import Synchronization
import R2UpAudio
import R2UpModel
import R2UpStore
import R2UpTransfer

/// What a run put in the bucket, as `catalog publish` would learn it by HEAD: the ETag the
/// server gave, the size, the Content-Type and the user metadata sent. The queue notes each
/// audio upload (in memory: the transfer thread only appends under a short lock) and saves
/// them all to the catalog cache in one transaction at the end of the run, so the machine that
/// uploaded a track never HEADs it to publish it. A run that dies first only costs those HEADs.
final class SentObjects: Sendable {
    private struct Sent {
        var bucket, key, etag: String
        var size: Int64
        var attributes: ObjectAttributes
    }
    private let sent = Mutex<[Sent]>([])

    /// Notes one finished upload (an append: the work is done by `take`, off the transfer thread).
    func note(bucket: String, key: String, etag: String, size: Int64, attributes: ObjectAttributes) {
        sent.withLock { $0.append(Sent(bucket: bucket, key: key, etag: etag, size: size, attributes: attributes)) }
    }

    /// The cache row a HEAD of the object would give (`headObjectDetails`): names lower-cased,
    /// values RFC 2047-decoded, empty values left out (never sent). Last-Modified is left to the
    /// listing. nil when a value or the Content-Type has white space at an end (HTTP trims it,
    /// a server may keep it differently) or a name is not lower-case letters, digits and '-'.
    static func catalogObject(etag: String, size: Int64, attributes: ObjectAttributes) -> CatalogObject? {
        guard !etag.isEmpty else { return nil }
        func plain(_ text: String) -> Bool {
            guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return true }
            return first != " " && first != "\t" && last != " " && last != "\t"
        }
        if let contentType = attributes.contentType, contentType.isEmpty || !plain(contentType) { return nil }
        var metadata: [String: String] = [:]
        for (name, value) in attributes.metadata where !value.isEmpty {
            let lower = name.lowercased()
            let isToken = !lower.isEmpty && lower.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "-") }
            guard isToken, plain(value) else { return nil }
            metadata[lower] = TagMetadata.decode(value)
        }
        return CatalogObject(etag: etag, size: size, contentType: attributes.contentType, lastModified: nil, metadata: metadata)
    }

    /// The audio objects noted, as cache rows by bucket and key, and forgets them. An object
    /// whose metadata a server might not return as sent (see `catalogObject`) is left to a HEAD.
    func take() -> [String: [String: CatalogObject]] {
        let noted = sent.withLock { sent in
            defer { sent = [] }
            return sent
        }
        var objects: [String: [String: CatalogObject]] = [:]
        for item in noted where AudioTagReader.isAudio(item.key) {
            guard let object = Self.catalogObject(etag: item.etag, size: item.size, attributes: item.attributes) else { continue }
            objects[item.bucket, default: [:]][item.key] = object
        }
        return objects
    }
}
