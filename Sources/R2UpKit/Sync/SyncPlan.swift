import Foundation
package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// What a sync will do, decided from the scan and the store alone (and the listing with
/// `--verify-remote`): a pure value, so every rule is tested without a server.
package struct SyncPlan: Sendable {
    package var uploads: [PlannedUpload] = []
    package var unchanged = 0
    /// Files younger than `--min-age`: still being written, maybe.
    package var waiting: [ScannedFile] = []
    /// The sizes of the waiting files no uploaded track is at: one may be a gone track's file
    /// renamed (`mv` changes the ctime), so `--delete` keeps that track's object this run.
    package var waitingNewSizes = Set<Int64>()
    /// Files left out by the filters.
    package var filtered = 0
    /// Files that cannot be uploaded at all (two names for one key, a key too long).
    package var rejected: [SyncFailure] = []
    /// Objects under the prefix with no local file (`--verify-remote`).
    package var cloudOnly: [ObjectSummary] = []

    private let prefix: String
    private let bucket: String
    private let filter: SyncFilter
    private let remote: [String: ObjectSummary]?
    private let minAgeNs: Int64
    private let nowNs: Int64
    private var byKey: [String: [PlannedUpload]] = [:]
    /// The key of a file (`--key-template`); nil: the prefix and its relative path.
    package var keyFor: (@Sendable (ScannedFile) -> String)?
    private var localKeys = Set<String>()

    /// An empty plan; `add` each scanned file, then `finish`.
    /// - Parameters:
    ///   - prefix: the key prefix ("" or ending in "/").
    ///   - bucket: the bucket; a track uploaded to another one is uploaded again.
    ///   - filter: the include and exclude globs a file must pass.
    ///   - remote: the listing by key (`--verify-remote`), nil when not asked.
    ///   - minAgeNs: how old a file must be to be taken.
    ///   - nowNs: the time, nanoseconds since 1970.
    package init(
        prefix: String, bucket: String, filter: SyncFilter, remote: [String: ObjectSummary]?, minAgeNs: Int64, nowNs: Int64
    ) {
        self.prefix = prefix
        self.bucket = bucket
        self.filter = filter
        self.remote = remote
        self.minAgeNs = minAgeNs
        self.nowNs = nowNs
    }

    /// Decides one file, given what the store knows of it (nil: nothing).
    package mutating func add(_ file: ScannedFile, track: SyncTrackState?) {
        let key = keyFor?(file) ?? prefix + file.relativePath
        if remote != nil { localKeys.insert(key) }
        guard filter.accepts(file.relativePath) else {
            filtered += 1
            return
        }
        let reason: SyncReason
        if let track, track.uploadState == .uploaded, track.bucket == bucket {
            if track.size != file.size || track.mtimeNs != file.mtimeNs || track.key != key {
                reason = .changed
            } else if let remote, remote[key]?.size != file.size {
                reason = .missingRemote
            } else {
                unchanged += 1
                return
            }
        } else {
            reason = .new  // never uploaded, not finished, or uploaded to another bucket
        }
        // ctime too: a copier that restores the old mtime is still writing.
        // Overflow-safe: a clamped time far in the past (see LocalFile.nanoseconds) is simply old.
        let (age, overflow) = nowNs.subtractingReportingOverflow(max(file.mtimeNs, file.ctimeNs))
        if !overflow && age < minAgeNs {
            waiting.append(file)
            if reason == .new { waitingNewSizes.insert(file.size) }
            return
        }
        byKey[key, default: []].append(PlannedUpload(file: file, key: key, reason: reason))
    }

    /// Settles what needs every file seen: two files for one key, cloud-only objects.
    package mutating func finish() {
        for (key, candidates) in byKey {
            if candidates.count > 1 {
                // Linux lets an NFD name and its NFC twin sit side by side; R2 has one key for both.
                // Each file's line names the key, not the others: n files print n paths, not n².
                let paths = candidates.map(\.file.path).sorted()
                for path in paths {
                    rejected.append(SyncFailure(
                        path: path, key: key, error: Self.clashLine(others: paths.count - 1, key: key, templated: keyFor != nil)))
                }
            } else if key.isEmpty || key.hasSuffix("/") {
                rejected.append(SyncFailure(
                    path: candidates[0].file.path, key: key, error: "\(OptionName.keyTemplate.option) makes an empty key for this file; change the template"))
            } else if key.utf8.count > ObjectKey.maximumBytes {
                rejected.append(SyncFailure(
                    path: candidates[0].file.path, key: key,
                    error: "the key is \(key.utf8.count) bytes long; S3 and R2 allow at most \(ObjectKey.maximumBytes)"))
            } else {
                uploads.append(candidates[0])
            }
        }
        byKey = [:]
        uploads.sort { $0.key < $1.key }
        rejected.sort { $0.path < $1.path }
        if let remote {
            cloudOnly = remote.values.filter { !localKeys.contains($0.key) && !$0.key.hasSuffix("/") }.sorted { $0.key < $1.key }
        }
        localKeys = []
    }

    /// Keys that more than one file maps to, with those files (sorted); keys compared as
    /// stored (NFC), so an NFD name and its NFC twin clash. push refuses these as sync does.
    package static func keyClashes(_ entries: [(path: String, key: String)]) -> [(key: String, paths: [String])] {
        var byKey: [String: [String]] = [:]
        for entry in entries {
            let key = ObjectKey.nfc(entry.key)
            // The same file named twice is one upload, not a clash. Bytes, not String ==.
            if byKey[key]?.contains(where: { Array($0.utf8) == Array(entry.path.utf8) }) == true { continue }
            byKey[key, default: []].append(entry.path)
        }
        // Paths in byte order: an NFC name and its NFD twin are equal as Swift Strings.
        return byKey.filter { $0.value.count > 1 }
            .map { (key: $0.key, paths: $0.value.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }) }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// Why files that map to one key are refused.
    package static func clashMessage(paths: [String], key: String, templated: Bool) -> String {
        templated
            ? "\(paths.joined(separator: " and ")) map to the key '\(key)' with \(OptionName.keyTemplate.option); tag them apart or change the template"
            : "\(paths.joined(separator: " and ")) map to the key '\(key)' (names that differ only in Unicode normalisation, or a \(OptionName.prefix.option) or \(OptionName.key.option) that folds them together); rename one or change the prefix"
    }

    /// Why one of the files that map to one key is refused, on its own line.
    package static func clashLine(others: Int, key: String, templated: Bool) -> String {
        let also = "as \(others) other \(others == 1 ? "file here does" : "files here do")"
        return templated
            ? "maps to the key '\(key)' with \(OptionName.keyTemplate.option), \(also); tag them apart or change the template"
            : "maps to the key '\(key)', \(also) (names that differ only in Unicode normalisation, or a \(OptionName.prefix.option) or \(OptionName.key.option) that folds them together); rename one or change the prefix"
    }

    /// The prefix as keys use it: NFC, "" or ending in "/".
    package static func normalizedPrefix(_ prefix: String?) -> String {
        guard let prefix, !prefix.isEmpty else { return "" }
        let nfc = ObjectKey.nfc(prefix)
        return nfc.hasSuffix("/") ? nfc : nfc + "/"
    }
}

/// A file that did not make it, and why.
package struct SyncFailure: Sendable, Equatable, Codable {
    package var path: String
    package var key: String
    package var error: String
}
