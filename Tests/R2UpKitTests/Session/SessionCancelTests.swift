import Foundation
import R2UpKit
import R2UpTestSupport
import Testing

/// Cancelling the task of a session's push (what `r2up serve` does on SIGTERM to the uploads its
/// pages started) ends it as Ctrl-C ends `r2up push`: at once, with nothing failed by the cancel,
/// and what was not uploaded left queued for the next push.
@Suite("session push cancelled")
struct SessionCancelTests {
    @Test("a cancelled push of a folder ends within a second; its files stay queued and the next push uploads them")
    func cancelledPush() async throws {
        let directory = try TestDirectory()
        let server = try TestServer.require()
        let folder = directory.path + "/album"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sizes = [2 << 20, 2 << 20, 2 << 20, 4_000]
        for (index, size) in sizes.enumerated() {
            _ = FileManager.default.createFile(atPath: folder + "/t\(index).flac", contents: Data(repeating: UInt8(index), count: size))
        }
        var configuration = R2UpSession.Configuration(
            endpoint: server.endpoint, accessKeyID: server.accessKey, secretAccessKey: server.secretKey,
            bucket: server.bucket, publicURL: server.publicURL, databasePath: directory.path + "/r2up.sqlite")
        configuration.bandwidthLimit = 1 << 20  // about 6 s for the folder: cancelled well before
        let prefix = server.scratchPrefix("session-cancel")
        let session = try R2UpSession(configuration)
        let events = session.events
        let push = Task { await session.push([folder], prefix: prefix) }
        for await event in events {
            if case .progress = event { break }
        }
        let cancelled = ContinuousClock.now
        push.cancel()
        let result = await push.value
        let took = ContinuousClock.now - cancelled
        #expect(took < .seconds(1), "the cancelled push took \(took) to end")
        #expect(result.category == .interrupted, "\(result.failures.map(\.message))")
        #expect(result.failures.allSatisfy { $0.category == .interrupted }, "\(result.failures.map(\.message))")
        #expect(result.completed.count + result.leftQueued == sizes.count, "\(result.completed.count) + \(result.leftQueued)")
        #expect(result.leftQueued >= 1)
        // Left to resume, none failed and none shown as uploading.
        let report = try session.queueReport()
        #expect(report.counts.failed == 0 && report.counts.uploading == 0, "\(report.counts)")
        #expect(report.counts.queued + report.counts.interrupted == result.leftQueued, "\(report.counts)")
        // The next push (no limit now) takes them up.
        configuration.bandwidthLimit = nil
        let next = try R2UpSession(configuration)
        let again = await next.push([folder], prefix: prefix)
        #expect(again.category == .success, "\(again.failures.map(\.message))")
        #expect(again.completed.count == result.leftQueued)
        #expect(try session.history(limit: 10).count == sizes.count)
    }
}
