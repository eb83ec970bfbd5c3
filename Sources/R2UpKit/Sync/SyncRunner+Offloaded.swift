import Foundation
import R2UpStore

extension SyncRunner {
    /// The folder check of `command` (`--delete`: the folder must hold something). An empty
    /// folder whose every uploaded track was offloaded is no unmounted disk: nothing there is
    /// stale, so it is synced (a watch service would otherwise be refused at every restart).
    func checkFolder(_ folder: String, command: String, delete: Bool) throws(SyncError) {
        guard delete else { return try SyncError.checkFolder(folder, command: command) }
        do {
            try SyncError.checkFolderToMirror(folder, command: command)
        } catch {
            if case .emptyForDelete = error, everyTrackOffloaded(under: folder) { return }
            throw error
        }
    }

    /// Whether r2up uploaded tracks under `folder` and offloaded every one of them.
    func everyTrackOffloaded(under folder: String) -> Bool {
        guard FileManager.default.fileExists(atPath: databasePath), let store = try? Store(path: databasePath) else { return false }
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard let offloaded = try? store.offloadedPaths(under: root, bucket: service.bucket), !offloaded.isEmpty else { return false }
        return (try? store.mirroredObjectCount(under: root, bucket: service.bucket, prefix: "")) == offloaded.count
    }
}
