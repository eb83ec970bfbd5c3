import Foundation
import R2UpModel
import R2UpStore
package import R2UpTransfer

/// Seed 004's "metadata first": the objects under a folder's prefix that have no local file yet,
/// as tracks `status` shows with the cloud glyph (DESIGN §7, priority 7) and `pull` can fetch.
package enum CloudOnly {
    /// The prefix a folder maps to, as the store knows it: each track under `folder` with a key
    /// gives the key less its path inside the folder (NFC, as keys are made), and only when every
    /// one gives the same prefix is it the folder's. Nil when no track has a key under the folder
    /// or the tracks disagree (one pushed with --key, or under another prefix): one track's key
    /// must never stand for the folder.
    package static func inferPrefix(folder: String, tracks: [TrackRecord]) -> String? {
        var found: String?
        for track in tracks {
            guard let key = track.key, track.path.hasPrefix(folder + "/") else { continue }
            let relative = ObjectKey.nfc(String(track.path.dropFirst(folder.count + 1)))
            let prefix: String
            if key == relative {
                prefix = ""
            } else if key.hasSuffix("/" + relative) {
                prefix = String(key.dropLast(relative.count))
            } else {
                return nil
            }
            if let found, found != prefix { return nil }
            found = prefix
        }
        return found
    }

    /// The prefix `status DIR --remote` lists: `given` (with a "/" added), else `inferPrefix`;
    /// when neither says, a bad-input error asking for --prefix.
    package static func prefix(folder: String, tracks: [TrackRecord], given: String?) throws(DownloadError) -> String {
        guard var prefix = given ?? inferPrefix(folder: folder, tracks: tracks) else {
            let keyed = tracks.contains { $0.key != nil && $0.path.hasPrefix(folder + "/") }
            throw .unknownPrefix(folder: folder, ambiguous: keyed)
        }
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        return prefix
    }

    /// Every object under `prefix` in the service's bucket whose file under `folder` neither exists
    /// nor is a known track, as a track with no local state. Keys that could not land safely are left out.
    package static func tracks(
        service: UploadService, folder: String, prefix: String, known: [TrackRecord]
    ) async throws(DownloadError) -> [TrackRecord] {
        let knownPaths = Set(known.map(\.path))
        var found: [TrackRecord] = []
        let listing: ObjectListing
        do {
            listing = try await service.client.listAllObjects(bucket: service.bucket, prefix: prefix)
        } catch {
            throw .s3(key: prefix, error)
        }
        do {
            for object in listing.objects where !(object.key.hasSuffix("/") && object.size == 0) {
                guard let relative = try? DownloadPath.relativePath(key: object.key, prefix: prefix) else { continue }
                let path = folder + "/" + relative
                if knownPaths.contains(path) || FileManager.default.fileExists(atPath: path) { continue }
                var track = TrackRecord(
                    path: path, size: object.size, mtimeNs: 0, bucket: service.bucket, key: object.key,
                    etag: object.etag, updatedAt: object.lastModified ?? Date())
                track.isOnDisk = false
                found.append(track)
            }
        }
        return found
    }
}
