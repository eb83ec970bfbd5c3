import Foundation
import SigV4
import R2UpAudio
import R2UpStore
import R2UpTransfer

extension CatalogPublisher {
    /// Where art goes, below the catalog's prefix: `art/<sha256>.jpg` and `art/<sha256>-thumb.png`.
    static let artFolder = "art/"

    /// Uploads each album's art once, under a content-addressed key (the SHA-256 of its bytes,
    /// so an unchanged cover is never sent again and two albums with one cover share it), with
    /// a PNG thumbnail beside it. Art is found on this machine only: the folder image or the
    /// embedded picture of the album's tracks this store uploaded (`AlbumArt.find`).
    /// - Returns: the art by album (`CatalogAlbum.identity`).
    func publishArt(
        tracks: [CatalogTrack], listing: [String: ObjectSummary], prefix: String, result: inout CatalogPublishResult
    ) async throws(CatalogError) -> [String: CatalogArt] {
        let paths: [String: String]
        do { paths = try store.localPaths(bucket: service.bucket, prefix: prefix) } catch { throw .store(error) }
        // Art another machine published, kept for the albums whose files are not here.
        var art = await previousArt(listing: listing, prefix: prefix)
        guard !paths.isEmpty else {
            result.albumsWithArt = art.count
            return art
        }
        var sent: Set<String> = []
        for album in CatalogAlbum.albums(of: tracks, art: [:]) {
            let local = album.tracks.compactMap { paths[$0] }.filter { access($0, R_OK) == 0 }
            // A folder image, else a picture in one of the first tracks (reading every track's costs a publish too much).
            guard !local.isEmpty, let image = AlbumArt.find(tracks: Array(local.prefix(2))), let kind = ArtImage.kind(image)
            else { continue }
            let name = prefix + Self.artFolder + Digest.sha256Hex(image)
            let key = name + "." + kind.fileExtension
            var entry = CatalogArt(key: key, url: service.publicURL(for: key))
            if listing[key] == nil, !sent.contains(key) {
                try await putArt(image, key: key, contentType: kind.contentType)
                result.artSent += 1
            }
            sent.insert(key)
            let thumbnail = name + "-thumb.png"
            if listing[thumbnail] != nil || sent.contains(thumbnail) {
                entry.thumbnailKey = thumbnail
            } else if kind == .jpeg, let png = ArtThumbnail.png(fromJPEG: image) {
                try await putArt(png, key: thumbnail, contentType: "image/png")
                result.artSent += 1
                sent.insert(thumbnail)
                entry.thumbnailKey = thumbnail
            }
            entry.thumbnailURL = entry.thumbnailKey.map { service.publicURL(for: $0) }
            art[CatalogAlbum.identity(artist: album.artist, album: album.album)] = entry
        }
        result.albumsWithArt = art.count
        return art
    }

    /// The art the current index.json references that is still in the bucket, by album (none
    /// when there is no index, or it cannot be read or parsed: the albums found here still get theirs).
    private func previousArt(listing: [String: ObjectSummary], prefix: String) async -> [String: CatalogArt] {
        guard listing[prefix + Self.jsonName] != nil,
            let reply = try? await service.client.getObject(bucket: service.bucket, key: prefix + Self.jsonName, sink: .memory(limit: 256 << 20)),
            reply.status == 200, let index = try? JSONDecoder().decode(CatalogIndex.self, from: Data(reply.body))
        else { return [:] }
        var art: [String: CatalogArt] = [:]
        for album in index.albums {
            guard var found = album.art, listing[found.key] != nil else { continue }
            if let thumbnail = found.thumbnailKey, listing[thumbnail] == nil { (found.thumbnailKey, found.thumbnailURL) = (nil, nil) }
            // The URLs as this machine's settings make them.
            found.url = service.publicURL(for: found.key)
            found.thumbnailURL = found.thumbnailKey.map { service.publicURL(for: $0) }
            art[CatalogAlbum.identity(artist: album.artist, album: album.album)] = found
        }
        return art
    }

    /// Puts one art object unless one is there (its key names its bytes: 412 means it is).
    private func putArt(_ bytes: [UInt8], key: String, contentType: String) async throws(CatalogError) {
        do {
            _ = try await service.client.putObjectIfUnchanged(
                bucket: service.bucket, key: key, bytes: bytes, contentType: contentType,
                cacheControl: "public, max-age=31536000, immutable", expectedETag: nil)
        } catch .service(let failure) where failure.status == 412 {
            return
        } catch {
            throw .s3(error)
        }
    }
}
