/// Where a local track stands with its cloud copy (seed 000, DESIGN §7).
public enum UploadState: String, Codable, Sendable, CaseIterable {
    case none, uploading, uploaded, error
}

/// Where a cloud track stands with its local copy; the mirror of `UploadState`.
public enum DownloadState: String, Codable, Sendable, CaseIterable {
    case none, downloading, downloaded, error
}

/// The one icon a track shows: the highest-priority state wins (DESIGN §7's table).
///
/// Raw values are the priorities, 1 first.
public enum TrackIcon: Int, Sendable, CaseIterable, Comparable {
    case uploading = 1
    case uploadError
    case downloading
    case downloadError
    case downloaded
    case uploaded
    case cloudOnly
    case localOnly

    /// A stable name for `--json`; it never changes with the glyphs.
    public var name: String {
        switch self {
        case .uploading: "uploading"
        case .uploadError: "uploadError"
        case .downloading: "downloading"
        case .downloadError: "downloadError"
        case .downloaded: "downloaded"
        case .uploaded: "uploaded"
        case .cloudOnly: "cloudOnly"
        case .localOnly: "localOnly"
        }
    }

    /// Picks the icon of highest priority among the states a track is in.
    /// - Parameters:
    ///   - upload: the track's upload state.
    ///   - download: the track's download state.
    ///   - isLocal: whether the file is on this machine.
    ///   - isInCloud: whether a cloud copy is known.
    public static func `for`(
        upload: UploadState, download: DownloadState, isLocal: Bool, isInCloud: Bool
    ) -> TrackIcon {
        // Written as one chain in priority order so the table reads straight off it.
        if upload == .uploading { return .uploading }
        if upload == .error { return .uploadError }
        if download == .downloading { return .downloading }
        if download == .error { return .downloadError }
        if download == .downloaded { return .downloaded }
        if upload == .uploaded { return .uploaded }
        if isInCloud && !isLocal { return .cloudOnly }
        return .localOnly
    }

    public static func < (lhs: TrackIcon, rhs: TrackIcon) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
