import Foundation

/// The tracks of a folder for `push DIR` (seed 000's "Upload All").
public enum TrackFolder {
    /// Regular files under `directory`, hidden ones skipped, in byte order of their relative
    /// paths (NFC). Symbolic links are not followed. Walked with sync's readdir scanner:
    /// FileManager's enumerator cost more CPU than the uploads' signing for 2,000 small files.
    public static func files(in directory: String) -> [(path: String, relativePath: String)] {
        scannedFiles(in: directory).map { ($0.path, $0.relativePath) }
    }

    /// `files(in:)` with each file's size and times as the scan saw them.
    static func scannedFiles(in directory: String) -> [ScannedFile] {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        var found: [ScannedFile] = []
        // What it cannot take (a symbolic link, an unreadable folder) is skipped, as before.
        _ = SyncScanner().scan(root) { found.append($0) }
        return found
    }

    /// Whether a track should be pushed: never uploaded, failed, or changed since its upload.
    /// With `onlyFailed`, only tracks in error.
    public static func isEligible(_ track: TrackRecord?, size: Int64, mtimeNs: Int64, onlyFailed: Bool) -> Bool {
        guard let track else { return !onlyFailed }
        if onlyFailed { return track.uploadState == .error }
        let unchanged = track.size == size && track.mtimeNs == mtimeNs
        return !(track.uploadState == .uploaded && unchanged) && track.uploadState != .uploading
    }

    /// The files of `directory` to push, with their paths relative to it: those `isEligible`
    /// says yes to, judged against the store's tracks (read in one query, not one per file).
    public static func eligibleFiles(
        in directory: String, store: Store, onlyFailed: Bool
    ) throws(StoreError) -> [(path: String, relativePath: String)] {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        let known = Dictionary(
            try store.tracks(under: root).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        // The scan's own stat decides: no second one per file.
        return scannedFiles(in: directory).filter { file in
            isEligible(known[file.path], size: file.size, mtimeNs: file.mtimeNs, onlyFailed: onlyFailed)
        }.map { ($0.path, $0.relativePath) }
    }
}
