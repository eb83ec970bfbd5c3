import R2UpKit

/// The Library as the pages show it: the last full read, kept current row by row from the
/// store's changes between full reads (``apply(_:under:)``), so a store change costs a read of
/// the rows it wrote, not of the library, and a page renders without reading.
struct LibrarySnapshot: Sendable {
    var view: LibraryView
    /// The version of the live state this shows (a page rendered from it goes on from there).
    var version: Int
    /// Where the next read of the changes starts.
    var mark: ChangeMark
    /// When the last full read began: what it saw of the disk is this old.
    var read: ContinuousClock.Instant
    /// Each track's group and position in it.
    private var places: [String: (group: Int, track: Int)] = [:]

    init(view: LibraryView, version: Int, mark: ChangeMark, read: ContinuousClock.Instant) {
        self.view = view
        self.version = version
        self.mark = mark
        self.read = read
        places.reserveCapacity(view.groups.reduce(0) { $0 + $1.tracks.count })
        for (group, members) in view.groups.enumerated() {
            for (track, status) in members.tracks.enumerated() { places[status.path] = (group, track) }
        }
    }

    /// Puts changed tracks in their places and sums their groups again; the tracks put and the
    /// groups touched.
    /// nil when a track that belongs on the pages has no place yet (a new file: a full read
    /// places it). A track outside the served folders is left out.
    mutating func apply(_ tracks: [TrackStatus], library: Library) -> (tracks: [TrackStatus], groups: [Int])? {
        var touched: Set<Int> = []
        var put: [TrackStatus] = []
        for track in tracks {
            guard let place = places[track.path] else {
                if library.roots.isEmpty || library.contains(track.path, tracks: []) { return nil }
                continue
            }
            guard view.groups[place.group].tracks[place.track] != track else { continue }
            view.groups[place.group].tracks[place.track] = track
            put.append(track)
            touched.insert(place.group)
        }
        for group in touched { view.groups[group].summary = GroupSummary(states: view.groups[group].tracks.map(\.uploadState)) }
        return (put, touched.sorted())
    }
}
