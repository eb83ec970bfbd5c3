import Foundation
import R2UpStore
import R2UpTransfer

extension R2UpSession {
    /// The tracks under `folder` grouped as `r2up status FOLDER` groups them (nil: every track
    /// r2up knows): by album where the stored tags name one, else by folder; each group with its
    /// summary (seed 000's "↑ 12/18") and each track with its icon.
    public func library(under folder: String? = nil, by grouping: StatusGrouping? = nil) throws(R2UpFailure) -> [TrackGroup<TrackStatus>] {
        let tracks = try tracks(under: folder)
        var tags: [String: AudioTags] = [:]
        if grouping != .folder {
            do {
                let stored = try store.storedTags(under: nil)
                for track in tracks { if let found = stored[track.path]?.tags { tags[track.path] = found } }
            } catch { throw R2UpFailure(error) }
        }
        return TrackGroups.make(tracks, path: \.path, state: \.uploadState, tags: tags, by: grouping)
    }

    /// The stored tags of the tracks under `folder` (nil: every track), by path.
    public func tags(under folder: String? = nil) throws(R2UpFailure) -> [String: AudioTags] {
        do {
            return try store.storedTags(under: folder.map(FilePath.absolute)).compactMapValues(\.tags)
        } catch { throw R2UpFailure(error) }
    }

    /// Brings cloud-only tracks back to their paths, as `r2up fetch PATH…` does (a folder: its
    /// cloud-only tracks), each verified before it appears. A track whose file is on disk is
    /// left alone.
    /// - Throws: ``R2UpFailure`` when a path names no track with a cloud copy, or the store fails.
    public func fetch(_ paths: [String]) async throws(R2UpFailure) -> FetchSummary {
        let fetcher = Fetcher(puller: Puller(service: service, store: store))
        let selection: (tracks: [StoredTrack], alreadyLocal: Int)
        do { selection = try fetcher.select(paths) } catch {
            switch error {
            case .store(let failure): throw R2UpFailure(failure)
            case .input(.unknownPath(let path)):
                throw R2UpFailure(path: path, message: "\(path): r2up knows no track with a cloud copy there", status: .badInput)
            }
        }
        var summary = await fetcher.run(selection.tracks)
        summary.alreadyLocal = selection.alreadyLocal
        return summary
    }
}

extension R2UpSession {
    /// The bucket one level under `prefix` (`Artist/Album/`; empty: the top), as `r2up ls PREFIX`
    /// lists it: its folders and its objects.
    /// - Throws: ``R2UpFailure`` when the bucket cannot be listed (said as the CLI says it).
    public func browse(prefix: String) async throws(R2UpFailure) -> BucketListing {
        do { return try await service.browse(prefix: prefix) } catch { throw R2UpFailure(error) }
    }
}

extension R2UpSession {
    /// The space the tracks under `folders` take, as `r2up du FOLDER` totals it (no folder:
    /// every track r2up knows): bytes on disk, in the bucket, only here (not yet safe), only in
    /// the cloud (offloaded) and in both. From the store and one `stat` per file; no request.
    /// - Parameter folders: absolute folders; empty for every track.
    /// - Returns: the totals over all of them.
    /// - Throws: ``R2UpFailure`` when the store cannot be read.
    public func space(under folders: [String]) throws(R2UpFailure) -> SpaceCounts {
        do {
            guard !folders.isEmpty else { return try SpaceUsage.measure(store: store).totals }
            var totals = SpaceCounts()
            for folder in folders { totals.add(try SpaceUsage.measure(folder: folder, store: store).totals) }
            return totals
        } catch { throw R2UpFailure(error) }
    }
}
