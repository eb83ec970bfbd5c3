import Foundation
package import R2UpModel
package import R2UpStore

/// The tracks of a folder for `push DIR` (seed 000's "Upload All").
package enum TrackFolder {
    /// Whether a track should be pushed: never uploaded, failed, or changed since its upload.
    /// With `onlyFailed`, only tracks in error. A track another live r2up is uploading is taken
    /// too: the queue then says so (exit 4) rather than the push claiming there is nothing to do.
    /// `bucket`: where the push goes; a track uploaded to another bucket is not uploaded here
    /// (nil: any bucket).
    package static func isEligible(_ track: TrackRecord?, size: Int64, mtimeNs: Int64, bucket: String?, onlyFailed: Bool) -> Bool {
        guard let track else { return !onlyFailed }
        if onlyFailed { return track.uploadState == .error }
        let unchanged = track.size == size && track.mtimeNs == mtimeNs
        return !(track.isUploaded(to: bucket) && unchanged)
    }

    /// The files of `directory` to push (those `isEligible` says yes to, judged against the
    /// store's tracks, read in one query), each with whether the store knows a track at its path
    /// (a file with none may be a track that moved: `MovePlan`).
    /// `uploaded`: the files left out because their tracks are uploaded and unchanged, with the
    /// key each is at (`push DIR --prefix` sends them to another key by a server-side copy).
    package static func scan(
        _ directory: String, store: Store, bucket: String?, onlyFailed: Bool
    ) throws(StoreError) -> (
        files: [(file: ScannedFile, isKnown: Bool)], uploaded: [(file: ScannedFile, bucket: String, key: String)],
        problems: [ScanProblem]
    ) {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        let known = Dictionary(
            try store.tracks(under: root).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        // Sync's readdir scanner (FileManager's enumerator cost more CPU than the uploads'
        // signing for 2,000 small files); its own stat decides, no second one per file. What it
        // cannot take (a symbolic link, an unreadable folder) is skipped.
        var eligible: [(file: ScannedFile, isKnown: Bool)] = []
        var uploaded: [(file: ScannedFile, bucket: String, key: String)] = []
        let problems = SyncScanner().scan(root) { file in
            // Partial downloads and temporary files are never published, as sync and watch skip them.
            guard SyncFilter.temporaryNames.accepts(file.relativePath) else { return }
            let track = known[file.path]
            if isEligible(track, size: file.size, mtimeNs: file.mtimeNs, bucket: bucket, onlyFailed: onlyFailed) {
                // Known: a track of this bucket (a file uploaded elsewhere is new here, and may have moved).
                eligible.append((file, track.map { $0.bucket == nil || $0.bucket == bucket } ?? false))
            } else if let track, track.uploadState == .uploaded, let bucket = track.bucket, let key = track.key {
                uploaded.append((file, bucket, key))
            }
        }
        return (eligible, uploaded, problems)
    }
}
