import R2UpModel
import Testing
@testable import r2up
@testable import R2UpKit

@Suite("sync's summary line")
struct SyncLineTests {
    @Test("the summary line cron mails: counts with thousands separators, sizes for people, tenths of a second")
    func summaryLine() {
        var summary = SyncSummary()
        summary.uploaded = 12
        summary.uploadedBytes = 340 * 1024 * 1024
        summary.failures = [SyncFailure(path: "/x", key: "x", error: "boom")]
        summary.unchanged = 4210
        summary.waiting = 3
        summary.seconds = 2.34
        #expect(summary.line == "sync: 12 uploaded (340 MB), 1 failed, 4,210 unchanged, 3 waiting (still being written) in 2.3 s")
        summary.dryRun = true
        summary.failures = []
        #expect(summary.line.hasPrefix("sync --dry-run: 12 to upload (340 MB), 0 failed,"))
        // A folder it could not read: why the run exits 1 with 0 failed (a link loop is not one).
        summary.dryRun = false
        summary.problems = [
            ScanProblem(path: "/m/locked", message: "cannot be read: Permission denied", unreadFolder: true),
            ScanProblem(path: "/m/loop", message: "a symbolic link loop (it leads back to a folder above it); not followed"),
        ]
        #expect(summary.line.hasPrefix("sync: 12 uploaded (340 MB), 0 failed, 1 folder unreadable, 4,210 unchanged,"))
        #expect(SyncSummary.count(1_234_567) == "1,234,567")
        #expect(SyncSummary.count(999) == "999")
    }
}
