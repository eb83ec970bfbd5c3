import Foundation
import Synchronization
import R2UpAudio
import R2UpModel
import R2UpStore
import R2UpTransfer

/// What a run put in the bucket, as `catalog publish` would learn it by HEAD: the ETag the
/// server gave, the size, the Content-Type and the user metadata sent. A consumer of the run's
/// events, not part of the queue: each recorded upload (`QueueEvent.completed`) is noted in
/// memory (an append under a short lock: a small file's event comes on the transfer thread),
/// and `save` writes the audio ones to the catalog cache in one transaction once the run is
/// over, so the machine that uploaded a track never HEADs it to publish it. A run that dies
/// first only costs those HEADs.
final class SentObjects: Sendable {
    private struct Sent {
        var bucket, key, etag: String
        var size: Int64
        var attributes: ObjectAttributes
    }
    /// An upload the run recorded, its attributes still to resolve.
    private struct Recorded {
        var path, contentType: String
        var bucket, key, etag: String
        var size: Int64
    }
    private let sent = Mutex<[Sent]>([])
    private let recorded = Mutex<[Recorded]>([])

    /// Notes one finished upload (an append: the work is done by `take`, off the transfer thread).
    func note(bucket: String, key: String, etag: String, size: Int64, attributes: ObjectAttributes) {
        sent.withLock { $0.append(Sent(bucket: bucket, key: key, etag: etag, size: size, attributes: attributes)) }
    }

    /// Takes a run's event: an upload it recorded is noted. A copy (a moved track) holds its
    /// source's metadata, not what the run would send, so it is left to a HEAD.
    func take(_ event: QueueEvent) {
        guard case .completed(let job, _, let outcome) = event, !job.isCopy, AudioTagReader.isAudio(outcome.key) else { return }
        let upload = Recorded(
            path: job.path, contentType: job.contentType, bucket: outcome.bucket, key: outcome.key, etag: outcome.etag,
            size: outcome.size)
        recorded.withLock { $0.append(upload) }
    }

    /// Writes what the run recorded to the catalog cache, in one transaction, each object with
    /// the attributes it was sent with (the run's tags, read once, kept by its `TagFeed`).
    /// A failure here only costs `catalog publish` its HEADs.
    func save(attributes: RunAttributes, through writer: StoreWriter) async {
        for upload in recorded.withLock({ uploads in defer { uploads = [] }; return uploads }) {
            var sentWith = await attributes.attributes(for: upload.path)
            sentWith.contentType = upload.contentType
            note(bucket: upload.bucket, key: upload.key, etag: upload.etag, size: upload.size, attributes: sentWith)
        }
        let objects = take()
        guard !objects.isEmpty else { return }
        try? await writer.perform { store throws(StoreError) in
            for (bucket, saving) in objects { try store.updateCatalogObjects(bucket: bucket, saving: saving, removing: []) }
        }
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
