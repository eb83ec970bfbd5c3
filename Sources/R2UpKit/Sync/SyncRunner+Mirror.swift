import Foundation
import R2UpModel
import R2UpStore
import R2UpTransfer

/// `sync --delete` / `watch --delete`: the bucket as a mirror of the folder.
package struct MirrorOptions: Sendable, Equatable {
    /// Remove the objects this store uploaded from files that are gone or moved.
    package var delete = false
    /// `--delete-max N`: allow up to N deletions in one run (else at most 10% of the folder's objects).
    package var deleteMax: Int?
    /// `--force`: no limit on how many are deleted at once.
    package var force = false

    package init(delete: Bool = false, deleteMax: Int? = nil, force: Bool = false) {
        self.delete = delete
        self.deleteMax = deleteMax
        self.force = force
    }

    /// More than this share of the folder's objects at once needs `--delete-max` or `--force`.
    package static let defaultShare = 10

    /// Why `count` deletions out of `total` objects are refused, or nil when they may go.
    package func refusal(count: Int, total: Int) -> String? {
        guard count > 0, !force else { return nil }
        if let deleteMax {
            guard count > deleteMax else { return nil }
            return "\(count) stale objects to delete, more than \(OptionName.deleteMax.option) \(deleteMax); nothing deleted (raise \(OptionName.deleteMax.option), or \(OptionName.force.option))"
        }
        guard count * 100 > total * Self.defaultShare else { return nil }
        return "\(count) stale objects to delete of \(total) this folder uploaded (more than \(Self.defaultShare)%); nothing deleted "
            + "(check the folder is the one you mean, then give \(OptionName.deleteMax.option) \(count) or \(OptionName.force.option))"
    }
}

/// An object `sync --delete` removed (or would remove, with `--dry-run`).
package struct SyncDeletion: Sendable, Equatable, Codable {
    package var key: String
    /// The file it was uploaded from.
    package var path: String
    /// "gone": the file is gone; "moved": its track is at another key now; "waiting" (kept,
    /// not deleted): a file that may be its rename is still being written.
    package var reason: String
}

extension SyncRunner {
    /// After a pass (never within it): the objects this store uploaded from files under `root`
    /// that no file holds any more. Without `--delete` they are only counted (`stale`); with
    /// it they are deleted unless the pass could not see the whole folder, the run stopped,
    /// or they are too many at once (`MirrorOptions.refusal`). An object that is not what this
    /// store uploaded (another ETag) is kept.
    func settleStale(root: String, store: Store?, options: SyncOptions, into summary: inout SyncSummary) async throws {
        guard let store, summary.stoppedBy == nil, !summary.interrupted else { return }
        let prefix = SyncPlan.normalizedPrefix(options.prefix)
        let bucket = service.bucket
        let (stale, kept) = try staleObjects(root: root, prefix: prefix, store: store, options: options, summary: summary)
        summary.stale = stale.count
        summary.kept = kept.map { SyncDeletion(key: $0.key, path: $0.path, reason: "waiting") }
        guard options.mirror.delete, !stale.isEmpty else { return }
        if summary.problems.contains(where: \.unreadFolder) {
            summary.deletionRefused = "part of the folder could not be read; no stale object deleted"
            return
        }
        let total = try store.mirroredObjectCount(under: root, bucket: bucket, prefix: prefix) + stale.filter(\.moved).count
        if let refusal = options.mirror.refusal(count: stale.count, total: total) {
            summary.deletionRefused = refusal
            summary.raise(.uploadFailed)
            return
        }
        let listed = stale.map { SyncDeletion(key: $0.key, path: $0.path, reason: $0.moved ? "moved" : "gone") }
        if options.dryRun {
            summary.deletions = listed
            return
        }
        var removed: [StaleObject] = []
        for (object, entry) in zip(stale, listed) {
            do {
                // Only what this store wrote: an object replaced since (another ETag) stays.
                if let info = try await service.client.headObject(bucket: bucket, key: object.key) {
                    if let recorded = object.etag, Self.bare(recorded) != Self.bare(info.etag) {
                        summary.failures.append(SyncFailure(
                            path: object.path, key: object.key,
                            error: "not deleted (\(OptionName.delete.option)): the object at \(object.key) changed since r2up uploaded it"))
                        continue
                    }
                    try await service.client.deleteObject(bucket: bucket, key: object.key)
                }
                removed.append(object)
                summary.deletions.append(entry)
            } catch {
                summary.failures.append(SyncFailure(
                    path: object.path, key: object.key, error: "not deleted (\(OptionName.delete.option)): \(Diagnosis(error).message)"))
            }
        }
        summary.stale -= removed.count
        do {
            try store.recordMirrorDeletions(bucket: bucket, objects: removed)
        } catch {
            summary.failures.append(SyncFailure(path: databasePath, key: removed.first?.key ?? "", error: Diagnosis(error).message))
            summary.raise(.storeFailure)
        }
        if summary.category == .success && !summary.failures.isEmpty { summary.category = .uploadFailed }
    }

    /// The tracks whose files the pass found gone (not moved, not offloaded) and the old keys of
    /// moved tracks, under the prefix; in a dry run the moves are not made yet, so their keys are named here.
    /// With `--delete`, a gone file's object is `kept` while a new file of its size waits for
    /// `--min-age`: `mv` changes the ctime, so a rename waits, and the next run copies it as a move.
    private func staleObjects(
        root: String, prefix: String, store: Store, options: SyncOptions, summary: SyncSummary
    ) throws -> (stale: [StaleObject], kept: [StaleObject]) {
        let moved = Set(summary.movedTracks.map(\.path))
        // A key this pass uploads or copies to is no stale object: a dry run, whose copies are not
        // made, listed the keys a sync back to an earlier prefix copies to as ones it would delete.
        var seen = Set(summary.planned.map(\.key))
        var stale: [StaleObject] = []
        var kept: [StaleObject] = []
        func add(_ object: StaleObject, keep: Bool = false) {
            guard object.key.hasPrefix(prefix), seen.insert(object.key).inserted else { return }
            if keep { kept.append(object) } else { stale.append(object) }
        }
        // An offloaded track's file is gone on purpose: its object is its only copy, not stale.
        let offloaded = summary.vanished.isEmpty ? [] : try store.offloadedPaths(under: root, bucket: service.bucket)
        for track in summary.vanished where !moved.contains(track.path) && !offloaded.contains(track.path) {
            add(
                StaleObject(key: track.key, etag: track.etag, path: track.path, moved: false),
                keep: options.mirror.delete && summary.waitingNewSizes.contains(track.size))
        }
        if options.dryRun && !options.deleteMoved {
            for track in summary.movedTracks { add(StaleObject(key: track.key, etag: track.etag, path: track.path, moved: true)) }
        }
        for object in try store.movedAwayObjects(under: root, bucket: service.bucket, prefix: prefix) { add(object) }
        return (stale.sorted { $0.key < $1.key }, kept.sorted { $0.key < $1.key })
    }

    /// An ETag without its quotes.
    static func bare(_ etag: String) -> String {
        etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
}
