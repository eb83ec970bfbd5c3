import Foundation
import Testing

@testable import R2UpKit
import R2UpStore

/// Issue 29 item 8: the rate a progress bar shows counts only bytes sent in this run.
@Suite("Transfer progress: bytes moved in this run")
struct TransferProgressTests {
    static func job(_ name: String, length: Int64, alreadySent: Int64 = 0, copyOf source: String? = nil) -> UploadJob {
        var job = UploadJob(
            path: "/music/\(name)", bucket: "b", key: name, contentType: "audio/mp4", length: length, mtimeNs: 1,
            createdAt: Date())
        job.bytesSent = alreadySent
        job.copySourceKey = source
        return job
    }

    @Test("a resumed upload counts from its recorded parts; a copy and a retry's resend count as they move")
    func movedBytes() {
        let progress = TransferProgress(limit: 1 << 20)
        let resumed = Self.job("resumed.m4a", length: 40 << 20, alreadySent: 32 << 20)
        let copy = Self.job("moved.m4a", length: 50 << 20, copyOf: "old/moved.m4a")
        let fresh = Self.job("fresh.m4a", length: 10 << 20)
        progress.expect(files: 3, bytes: 100 << 20)
        for job in [resumed, copy, fresh] { progress.started(job) }
        progress.sent(resumed.id, bytes: 36 << 20)
        progress.sent(fresh.id, bytes: 2 << 20)
        var snapshot = progress.snapshot()
        #expect(snapshot.bytesMoved == 6 << 20)
        #expect(snapshot.bytesDone == 38 << 20)

        progress.finished(copy, succeeded: true)
        // A retry moved the fresh file back to 1 MiB: its resend to 3 MiB is 2 MiB more on the wire.
        progress.sent(fresh.id, bytes: 1 << 20)
        progress.sent(fresh.id, bytes: 3 << 20)
        snapshot = progress.snapshot()
        #expect(snapshot.bytesMoved == 8 << 20, "a copy sends no bytes")
        #expect(snapshot.bytesDone == (36 << 20) + (50 << 20) + (3 << 20))
        #expect(progress.limit == 1 << 20)
    }
}
