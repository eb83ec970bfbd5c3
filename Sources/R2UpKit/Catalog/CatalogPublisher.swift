import Foundation
import SigV4
import R2UpAudio
package import R2UpStore
package import R2UpTransfer

/// What `catalog publish` did.
package struct CatalogPublishResult: Sendable, Equatable {
    package var tracks = 0
    /// Objects HEADed this time (new or changed since the last publish from this database).
    package var heads = 0
    package var jsonSent = false
    package var htmlSent = false
    /// Times a 412 (another publisher wrote first) made it start over.
    package var retries = 0
    /// Album art objects uploaded this time (art and thumbnails already there are not sent again).
    package var artSent = 0
    /// Albums whose art the index references.
    package var albumsWithArt = 0
    package var indexURL = ""
    package var jsonURL = ""
}

/// Why `catalog publish` stopped.
package enum CatalogError: Error, CustomStringConvertible {
    case s3(S3ClientError)
    case store(StoreError)
    /// Other publishers kept replacing index.json between our read and our write.
    case contended(attempts: Int)

    package var description: String {
        switch self {
        case .s3(let error): "catalog publish: \(error)"
        case .store(let error): "catalog publish: \(error)"
        case .contended(let attempts):
            "catalog publish: index.json changed under every one of \(attempts) attempts (another publisher?); run it again"
        }
    }
}

/// `r2up catalog publish`: `index.json` and `index.html` built from the bucket itself — its
/// listing, and each object's metadata by HEAD, cached in the store by ETag — so any machine
/// publishes the whole library. index.json is replaced with `If-Match` on the ETag listed (or
/// `If-None-Match: *`), so two publishers never drop each other's tracks: a 412 starts over.
package struct CatalogPublisher: Sendable {
    package let service: UploadService
    package let store: Store
    package static let jsonName = "index.json"
    package static let htmlName = "index.html"
    static let attempts = 5

    package init(service: UploadService, store: Store) {
        self.service = service
        self.store = store
    }

    /// Publishes the catalog of the tracks under `prefix` ("" or ending in "/").
    package func publish(prefix: String) async throws(CatalogError) -> CatalogPublishResult {
        var result = CatalogPublishResult()
        result.indexURL = service.publicURL(for: prefix + Self.htmlName)
        result.jsonURL = service.publicURL(for: prefix + Self.jsonName)
        for attempt in 1...Self.attempts {
            let listing = try await list(prefix: prefix)
            let tracks = try await tracks(listing: listing, prefix: prefix, result: &result)
            result.tracks = tracks.count
            let art = try await publishArt(tracks: tracks, listing: listing, prefix: prefix, result: &result)
            let json = CatalogIndex(bucket: service.bucket, prefix: prefix, tracks: tracks, art: art).encoded()
            let html = Array(CatalogPage.html.utf8)
            do {
                result.jsonSent = try await put(json, key: prefix + Self.jsonName, contentType: "application/json", current: listing[prefix + Self.jsonName])
                result.htmlSent = try await put(html, key: prefix + Self.htmlName, contentType: "text/html; charset=utf-8", current: listing[prefix + Self.htmlName])
                return result
            } catch .service(let failure) where failure.status == 412 {
                result.retries = attempt
                continue
            } catch {
                throw .s3(error)
            }
        }
        throw .contended(attempts: Self.attempts)
    }

    /// Every object under the prefix, by key.
    private func list(prefix: String) async throws(CatalogError) -> [String: ObjectSummary] {
        var objects: [String: ObjectSummary] = [:]
        var token: String?
        do {
            repeat {
                let page = try await service.client.listObjects(bucket: service.bucket, prefix: prefix, continuationToken: token)
                for object in page.objects { objects[object.key] = object }
                token = page.continuationToken
            } while token != nil
        } catch {
            throw .s3(error)
        }
        // The old object of a track that moved (still there without --delete-moved or sync --delete)
        // is not a second track: left out while it holds what this store wrote there.
        let superseded: [String: String?]
        do { superseded = try store.supersededKeys(bucket: service.bucket, prefix: prefix) } catch { throw .store(error) }
        for (key, etag) in superseded {
            guard let listed = objects[key], let etag else { continue }
            if listed.etag.trimmingCharacters(in: ["\""]) == etag.trimmingCharacters(in: ["\""]) { objects[key] = nil }
        }
        return objects
    }

    /// The audio objects as catalog tracks, HEADing only those the store has not seen with this ETag.
    private func tracks(
        listing: [String: ObjectSummary], prefix: String, result: inout CatalogPublishResult
    ) async throws(CatalogError) -> [CatalogTrack] {
        let audio = listing.values.filter { AudioTagReader.isAudio($0.key) && $0.size > 0 }
        var known: [String: CatalogObject]
        do { known = try store.catalogObjects(bucket: service.bucket, prefix: prefix) } catch { throw .store(error) }
        let stale = audio.filter { known[$0.key]?.etag != $0.etag }.map(\.key)
        let client = service.client
        let bucket = service.bucket
        var fresh: [String: CatalogObject] = [:]
        var failure: S3ClientError?
        // HEADs in parallel, twice as many at once as uploads would be.
        var pending = stale.makeIterator()
        let width = max(1, (service.options.concurrency ?? 16) * 2)
        await withTaskGroup(of: (key: String, outcome: Result<ObjectDetails?, S3ClientError>).self) { group in
            for _ in 0..<width {
                guard let key = pending.next() else { break }
                group.addTask { (key, await Self.head(client, bucket: bucket, key: key)) }
            }
            while let done = await group.next() {
                switch done.outcome {
                case .success(let details?):
                    fresh[done.key] = CatalogObject(
                        etag: details.etag, size: details.size, contentType: details.contentType,
                        lastModified: details.lastModified ?? listing[done.key]?.lastModified, metadata: details.metadata)
                case .success(nil): break  // deleted since the listing
                case .failure(let error): if failure == nil { failure = error }
                }
                if let key = pending.next() {
                    group.addTask { (key, await Self.head(client, bucket: bucket, key: key)) }
                }
            }
        }
        if let failure { throw .s3(failure) }
        result.heads += stale.count
        let gone = known.keys.filter { listing[$0] == nil || !AudioTagReader.isAudio($0) }
        do { try store.updateCatalogObjects(bucket: service.bucket, saving: fresh, removing: gone) } catch { throw .store(error) }
        known.merge(fresh) { _, new in new }
        return audio.compactMap { object -> CatalogTrack? in
            guard var details = known[object.key], details.etag == object.etag else { return nil }
            // The listing's Last-Modified: the same for a HEADed object and one this store sent.
            if let listed = object.lastModified { details.lastModified = listed }
            return CatalogTrack(key: object.key, url: service.publicURL(for: object.key), details: details)
        }.sorted { $0.key < $1.key }
    }

    private static func head(_ client: S3Client, bucket: String, key: String) async -> Result<ObjectDetails?, S3ClientError> {
        do { return .success(try await client.headObjectDetails(bucket: bucket, key: key)) } catch { return .failure(error) }
    }

    /// Puts one catalog file unless what is there already has these bytes (its ETag is their MD5).
    /// - Returns: whether it was sent.
    private func put(_ bytes: [UInt8], key: String, contentType: String, current: ObjectSummary?) async throws(S3ClientError) -> Bool {
        let md5 = Digest.md5(bytes).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        if let current, current.etag.lowercased() == md5 { return false }
        _ = try await service.client.putObjectIfUnchanged(
            bucket: service.bucket, key: key, bytes: bytes, contentType: contentType, cacheControl: "no-cache",
            expectedETag: current?.etag)
        return true
    }
}
