import Foundation
import Testing
import R2UpModel
@testable import R2UpStore
import R2UpTestSupport

@Suite("Two stores on one file, as cron and a person at a terminal")
struct StoreSharingTests {
    @Test("two stores opened at once on a new file both come up migrated")
    func openTogether() async throws {
        let folder = try ScratchFolder()
        let path = folder.file("shared.sqlite")
        let migrations = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask { try Store(path: path).appliedMigrations() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(migrations == Array(repeating: ["v1", "v2", "v3-leases", "v4-deletions", "v5-audio", "v6-track-keys", "v7-track-moves", "v8-genre-compilation", "v9-copy-sent", "v10-offloaded", "v11-offloaded-before-v10", "v12-pulled-offloaded-before-v10"], count: 4))
    }

    @Test("concurrent writes from two stores never see 'database is locked'")
    func concurrentWrites() async throws {
        let folder = try ScratchFolder()
        let path = folder.file("shared.sqlite")
        let stores = [try Store(path: path), try Store(path: path)]
        let tasks = 8
        let rounds = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                let store = stores[task % 2]
                group.addTask {
                    for round in 0..<rounds {
                        let job = Sample.job("/m/\(task)/\(round).flac", key: "\(task)/\(round).flac")
                        try store.enqueue(job)
                        try store.recordPart(jobID: job.id, partNumber: 1, size: 5, etag: "e", checksum: nil)
                        try store.completeJob(id: job.id, historyItem: Sample.item("\(task)-\(round).flac"))
                        _ = try store.recentUploads(limit: 5)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try stores[0].uploadCount() == tasks * rounds)
        #expect(try stores[1].jobs(in: [.completed]).count == tasks * rounds)
        #expect(try stores[1].tracks(under: "/m").count == tasks * rounds)
    }
}
