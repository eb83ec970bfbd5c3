/// Where a local track stands with its cloud copy (seed 000, DESIGN §7).
public enum UploadState: String, Codable, Sendable, CaseIterable {
    case none, uploading, uploaded, error
}

/// Where a cloud track stands with its local copy; the mirror of `UploadState`.
public enum DownloadState: String, Codable, Sendable, CaseIterable {
    case none, downloading, downloaded, error
}

/// The colour an icon is drawn in; a terminal maps these names to its own palette.
public enum IconColour: String, Codable, Sendable, CaseIterable {
    case orange, red, accent, green, secondary
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

    /// 1 is the most urgent; the lowest number present wins.
    public var priority: Int { rawValue }

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

    /// The glyph on a UTF-8 terminal, nil for a local-only track (it shows nothing).
    ///
    /// Hollow icons get their own arrow so they still differ where colour is off (`NO_COLOR`).
    public var glyph: String? {
        switch self {
        case .uploading, .uploaded: "↑"
        case .uploadError, .downloadError: "⚠"
        case .downloading: "⇣"
        case .downloaded: "↓"
        case .cloudOnly: "☁"
        case .localOnly: nil
        }
    }

    /// The glyph where the terminal is not UTF-8.
    public var asciiGlyph: String? {
        switch self {
        case .uploading: "*"  // not uploaded's "^": without colour the two must differ
        case .uploaded: "^"
        case .uploadError, .downloadError: "!"
        case .downloading: "v"
        case .downloaded: "V"
        case .cloudOnly: "@"
        case .localOnly: nil
        }
    }

    /// The seed draws downloading as an outline; everything else is filled.
    public var isHollow: Bool { self == .downloading }

    /// The colour, nil where the icon has none.
    public var colour: IconColour? {
        switch self {
        case .uploading: .orange
        case .uploadError, .downloadError: .red
        case .downloading, .cloudOnly: .accent
        case .downloaded, .uploaded: .green
        case .localOnly: nil
        }
    }

    /// The glyph for a terminal that is (`ascii: false`) or is not UTF-8.
    public func glyph(ascii: Bool) -> String? {
        ascii ? asciiGlyph : glyph
    }

    /// The same, where colour may be off (`NO_COLOR`, not a terminal): uploading, orange "↑"
    /// in colour, is then the hollow "⇡", so it never looks like uploaded's "↑".
    public func glyph(ascii: Bool, colour: Bool) -> String? {
        if self == .uploading && !ascii && !colour { return "⇡" }
        return glyph(ascii: ascii)
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
