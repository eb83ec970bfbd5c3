import Foundation

/// Seed 004's "metadata first": the objects under a folder's prefix that have no local file yet,
/// as tracks `status` shows with the cloud glyph (DESIGN §7, priority 7) and `pull` can fetch.
public enum CloudOnly {
    /// The prefix a folder was pushed under, read off its tracks: a key that ends with the
    /// track's path inside the folder gives the rest of it. Nil when no track says.
    public static func inferPrefix(folder: String, tracks: [TrackRecord]) -> String? {
        for track in tracks {
            guard let key = track.key, track.path.hasPrefix(folder + "/") else { continue }
            let relative = String(track.path.dropFirst(folder.count + 1))
            if key == relative { return "" }
            if key.hasSuffix("/" + relative) { return String(key.dropLast(relative.count)) }
        }
        return nil
    }

    /// Every object under `prefix` in the service's bucket whose file under `folder` neither exists
    /// nor is a known track, as a track with no local state. Keys that could not land safely are left out.
    public static func tracks(
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
                found.append(
                    TrackRecord(
                        path: path, size: object.size, mtimeNs: 0, bucket: service.bucket, key: object.key,
                        etag: object.etag, updatedAt: object.lastModified ?? Date()))
            }
        }
        return found
    }
}
