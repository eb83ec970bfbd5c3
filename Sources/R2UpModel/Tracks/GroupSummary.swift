/// The aggregate upload state shown after a group's (a folder's, an album's) track count.
///
/// DESIGN §7 and seed 000: any uploading wins, then any error, then all uploaded,
/// then some uploaded; a group where no track has an upload state shows nothing.
public struct GroupSummary: Sendable, Equatable {
    /// Which row of the group table applies.
    public enum Kind: String, Sendable, CaseIterable {
        case uploading, error, allUploaded, partial
    }

    /// The applicable row, nil when nothing is shown.
    public let kind: Kind?
    /// Tracks in the group.
    public let total: Int
    /// Tracks whose upload state is `uploaded`.
    public let uploaded: Int
    /// Tracks whose upload state is `uploading`.
    public let uploading: Int
    /// Tracks whose upload state is `error`.
    public let errors: Int

    /// Summarises the upload states of a group's local tracks.
    public init(states: some Sequence<UploadState>) {
        var total = 0, uploaded = 0, uploading = 0, errors = 0
        for state in states {
            total += 1
            switch state {
            case .uploaded: uploaded += 1
            case .uploading: uploading += 1
            case .error: errors += 1
            case .none: break
            }
        }
        self.total = total
        self.uploaded = uploaded
        self.uploading = uploading
        self.errors = errors
        if uploading > 0 {
            kind = .uploading
        } else if errors > 0 {
            kind = .error
        } else if uploaded > 0 && uploaded == total {
            kind = .allUploaded
        } else if uploaded > 0 {
            kind = .partial
        } else {
            kind = nil
        }
    }

    /// The stable name for `--json`, nil when nothing is shown.
    public var name: String? { kind?.rawValue }

    /// "uploaded/total", or nil where the table shows no count (all uploaded, nothing).
    ///
    /// The seed's examples ("2/18", "15/18", "12/18") count uploaded tracks in every row.
    public var count: String? {
        switch kind {
        case .uploading, .error, .partial: "\(uploaded)/\(total)"
        case .allUploaded, nil: nil
        }
    }
}
