import Foundation
import R2UpModel
import R2UpTransfer

/// The files of a watch's batch, as a scan would have found them.
enum WatchFiles {
    /// Each path under `root` that is (still) a regular file the scanner would take, in the
    /// byte order of paths; gone, hidden (when the scanner skips hidden names) and other kinds
    /// are left out.
    static func scanned(_ paths: [String], under root: String, scanner: SyncScanner) -> [ScannedFile] {
        let base = root.hasSuffix("/") ? root : root + "/"
        var seen = Set<[UInt8]>()
        var files: [ScannedFile] = []
        let ordered = paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for path in ordered where path.hasPrefix(base) && seen.insert(Array(path.utf8)).inserted {
            let relative = String(path.dropFirst(base.count))
            guard !relative.isEmpty else { continue }
            if scanner.skipHidden && relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }  // gone since its event
            if info.st_mode & S_IFMT == S_IFLNK {
                guard scanner.followSymlinks, stat(path, &info) == 0 else { continue }
            }
            guard info.st_mode & S_IFMT == S_IFREG else { continue }
            files.append(
                ScannedFile(
                    path: path, relativePath: ObjectKey.nfc(relative), size: Int64(info.st_size),
                    mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs))
        }
        return files
    }

    /// The regular files under `folder` (a new folder, or one that cannot be watched).
    static func under(_ folder: String, scanner: SyncScanner) -> [String] {
        var paths: [String] = []
        _ = scanner.scan(folder) { paths.append($0.path) }
        return paths
    }

    /// When a file the plan found too young (or changing) is worth another look: once it has
    /// been quiet for `minAge`, and not sooner than a quarter of a second.
    static func due(_ path: String, minAge: Duration, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let changedNs = max(info.mtimeNs, info.ctimeNs)
        let nowNs = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        let (ageNs, overflow) = nowNs.subtractingReportingOverflow(changedNs)
        let floor = Duration.milliseconds(250)
        guard !overflow, ageNs >= 0 else { return now + minAge }  // a time in the future: look again later
        let left = minAge - .nanoseconds(ageNs)
        return now + max(left, floor)
    }
}
