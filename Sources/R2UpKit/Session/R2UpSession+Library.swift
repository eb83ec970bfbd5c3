import Foundation
import R2UpStore
import R2UpTransfer

extension R2UpSession {
    /// The tracks under `folder` grouped as `r2up status FOLDER` groups them (nil: every track
    /// r2up knows): by album where the stored tags name one, else by folder; each group with its
    /// summary (seed 000's "↑ 12/18") and each track with its icon.
    public func library(under folder: String? = nil, by grouping: StatusGrouping? = nil) throws(R2UpFailure) -> [TrackGroup<TrackStatus>] {
        group(try tracks(under: folder), by: grouping, tags: grouping == .folder ? nil : try storedTags())
    }

    /// A Library screen in one read: the groups of each folder, as ``library(under:by:)`` gives
    /// them, and the space they take, as ``space(under:)`` totals it, from one walk of each
    /// folder (one `stat` per file) instead of two.
    /// - Parameter folders: absolute folders, each grouped on its own; empty for every track.
    /// - Returns: the groups, folder after folder, and the totals over all the folders.
    /// - Throws: ``R2UpFailure`` when the store cannot be read.
    public func libraryView(under folders: [String]) throws(R2UpFailure) -> LibraryView {
        guard !folders.isEmpty else { return LibraryView(groups: try library(under: nil), space: try space(under: [])) }
        let tags = try storedTags()
        var view = LibraryView(groups: [], space: SpaceCounts())
        var counted = CountedObjects()
        for folder in folders {
            let scanned: ScannedTracks
            do { scanned = try TrackScan.tracks(under: FilePath.absolute(folder), store: store) } catch { throw R2UpFailure(error) }
            view.space.add(SpaceUsage.totals(of: scanned, counted: &counted))
            view.groups += group(scanned.map(TrackStatus.init), by: nil, tags: tags)
        }
        return view
    }

    private func storedTags() throws(R2UpFailure) -> [String: StoredTags] {
        do { return try store.storedTags(under: nil) } catch { throw R2UpFailure(error) }
    }

    private func group(_ tracks: [TrackStatus], by grouping: StatusGrouping?, tags stored: [String: StoredTags]?) -> [TrackGroup<TrackStatus>] {
        var tags: [String: AudioTags] = [:]
        if let stored {
            for track in tracks { if let found = stored[track.path]?.tags { tags[track.path] = found } }
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
                throw R2UpFailure(path: path, message: "\(path): r2up knows no track with a cloud copy there", category: .badInput)
            }
        }
        var summary = await fetcher.run(selection.tracks)
        summary.alreadyLocal += selection.alreadyLocal
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
            var counted = CountedObjects()
            for folder in folders {
                let usage = try SpaceUsage.measure(folder: folder, store: store, counted: counted)
                totals.add(usage.totals)
                counted = usage.counted
            }
            return totals
        } catch { throw R2UpFailure(error) }
    }
}

/// A Library screen's data from one read (``R2UpSession/libraryView(under:)``).
public struct LibraryView: Sendable {
    /// The groups, as `r2up status FOLDER` groups them, folder after folder.
    public var groups: [TrackGroup<TrackStatus>]
    /// The space the folders take, as `r2up du` totals it.
    public var space: SpaceCounts
}

extension R2UpSession {
    /// A signal now and after each commit to the database, by this process or any other (a
    /// cron `sync`, a `push` in another terminal, this session's own pushes), within a tenth of
    /// a second. One cheap watcher (`PRAGMA data_version`) that reads and holds nothing else:
    /// an app that shows a big library follows this once and reads what it shows
    /// (``library(under:by:)``, ``queueReport()``) once per signal for every screen, instead of
    /// one ``trackStates(under:)`` per screen. Signals not yet read are merged into one. The
    /// sequence throws an ``R2UpFailure`` when the database cannot be read; ending the
    /// iteration stops the watcher.
    public func storeChanges() -> AsyncThrowingStream<Void, any Error> {
        let commits = store.observeCommits()
        let (stream, continuation) = AsyncThrowingStream<Void, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let relay = Task {
            do {
                for try await _ in commits { continuation.yield() }
                continuation.finish()
            } catch {
                continuation.finish(throwing: R2UpFailure(error))
            }
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }
}
