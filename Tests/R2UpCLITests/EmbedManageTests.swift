import Foundation
import R2UpKit
import R2UpTestSupport
import Testing

/// The session's offload and fetch as an app calls them, on tracks `r2up push` uploaded,
/// against the real server: what an app reads of the outcome is the face's values only.
@Suite("embedding: offload and fetch (R2UpSession)", .serialized)
struct EmbedManageTests {
    @Test("an app offloads tracks and fetches them back; an object deleted since is a failed fetch whose Diagnosis says so")
    func offloadAndFetch() async throws {
        let folder = try TemporaryFolder()
        let lib = try await OffloadFixtures.library(folder, ["kept.m4a", "gone.m4a"])
        let session = try R2UpSession(EmbedTests.configuration(try TestServer.require(), database: lib.db))

        let offloaded = try await session.offload([lib.dir])
        #expect(offloaded.freed.map(\.path).sorted() == [lib.dir + "/gone.m4a", lib.dir + "/kept.m4a"])
        #expect(offloaded.kept.isEmpty, "\(offloaded.kept)")
        #expect(offloaded.category == .success)
        #expect(try PullFixtures.files(under: lib.dir) == [])

        try await OffloadFixtures.boto("s3.delete_object(Bucket=b, Key=a[0])", [lib.prefix + "gone.m4a"])
        let fetched = try await session.fetch([lib.dir])
        #expect(fetched.fetched.map(\.path) == [lib.dir + "/kept.m4a"])
        #expect(fetched.fetched.map(\.failure) == [nil])
        #expect(PullFixtures.text(lib.dir + "/kept.m4a") == "kept.m4a")
        let failed = try #require(fetched.failed.first)
        #expect(fetched.failed.count == 1)
        #expect(failed.path == lib.dir + "/gone.m4a")
        let bucket = lib.env["R2UP_BUCKET"] ?? ""
        #expect(
            failed.failure
                == Diagnosis(
                    category: .uploadFailed, message: "its object '\(lib.prefix)gone.m4a' is no longer in bucket '\(bucket)'; nothing fetched"))
        #expect(fetched.category == .uploadFailed)
        #expect(try PullFixtures.files(under: lib.dir) == ["kept.m4a"], "nothing at the failed track's path")
    }
}
