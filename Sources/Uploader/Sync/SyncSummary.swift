import Foundation

/// A file a dry run would upload.
public struct SyncPlannedFile: Sendable, Equatable, Codable {
    public var path: String
    public var key: String
    public var size: Int64
    public var reason: SyncReason
}

/// What a sync did: one line for cron's mail, or an object with `--json`.
public struct SyncSummary: Sendable, Equatable, Encodable {
    public var dryRun = false
    /// Uploaded and verified (with `--dry-run`: would be uploaded).
    public var uploaded = 0
    public var uploadedBytes: Int64 = 0
    public var failed: Int { failures.count }
    public var unchanged = 0
    /// Too young, or changed between scan and upload: the next run takes them.
    public var waiting = 0
    /// Local files removed after a verified upload (`--delete-after`).
    public var deleted = 0
    /// Objects with no local file, recorded as cloud only (`--verify-remote`).
    public var cloudOnly = 0
    /// Left out by `--include` / `--exclude` and the default excludes.
    public var excluded = 0
    public var seconds = 0.0
    public var failures: [SyncFailure] = []
    /// What the scan skipped: symbolic link loops, unreadable folders.
    public var problems: [ScanProblem] = []
    /// With `--dry-run`: the files that would be uploaded.
    public var planned: [SyncPlannedFile] = []
    /// DESIGN §3's exit code for the run.
    public var exitCode: Int32 = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case dryRun, uploaded, uploadedBytes, wouldUpload, wouldUploadBytes, failed, unchanged, waiting, deleted, cloudOnly, excluded, seconds
        case failures, problems, planned, exitCode
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dryRun, forKey: .dryRun)
        // A dry run uploads nothing: what it would upload has a name of its own.
        try c.encode(dryRun ? 0 : uploaded, forKey: .uploaded)
        try c.encode(dryRun ? 0 : uploadedBytes, forKey: .uploadedBytes)
        try c.encode(dryRun ? uploaded : 0, forKey: .wouldUpload)
        try c.encode(dryRun ? uploadedBytes : 0, forKey: .wouldUploadBytes)
        try c.encode(failed, forKey: .failed)
        try c.encode(unchanged, forKey: .unchanged)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(deleted, forKey: .deleted)
        try c.encode(cloudOnly, forKey: .cloudOnly)
        try c.encode(excluded, forKey: .excluded)
        try c.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        try c.encode(failures, forKey: .failures)
        try c.encode(problems, forKey: .problems)
        try c.encode(planned, forKey: .planned)
        try c.encode(exitCode, forKey: .exitCode)
    }

    /// "sync: 12 uploaded (340 MB), 1 failed, 4,210 unchanged, 3 waiting (still being written) in 2.3 s"
    public var line: String {
        var parts = [
            dryRun
                ? "\(Self.count(uploaded)) to upload (\(ByteCount.string(uploadedBytes)))"
                : "\(Self.count(uploaded)) uploaded (\(ByteCount.string(uploadedBytes)))"
        ]
        if deleted > 0 { parts.append("\(Self.count(deleted)) deleted locally") }
        parts.append("\(Self.count(failed)) failed")
        parts.append("\(Self.count(unchanged)) unchanged")
        parts.append("\(Self.count(waiting)) waiting (still being written)")
        if cloudOnly > 0 { parts.append("\(Self.count(cloudOnly)) cloud only") }
        let tenths = (seconds * 10).rounded() / 10
        return "sync\(dryRun ? " --dry-run" : ""): " + parts.joined(separator: ", ") + " in \(tenths) s"
    }

    /// 4210 → "4,210", the same in every locale (cron logs are read by grep).
    static func count(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }
}
