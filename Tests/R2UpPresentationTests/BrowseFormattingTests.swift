import Foundation
import Testing
@testable import R2UpKit
@testable import r2up

@Suite("ls and presign formatting")
struct BrowseFormattingTests {
    @Test("--expires: seconds or 90s/15m/12h/7d, from 1 s to 7 days, whole seconds")
    func expiry() {
        #expect(PresignExpiry.seconds("1") == .success(1))
        #expect(PresignExpiry.seconds("90m") == .success(5400))
        #expect(PresignExpiry.seconds("7d") == .success(604_800))
        #expect(PresignExpiry.seconds("8d") == .failure(.outOfRange("8d")))
        #expect(PresignExpiry.seconds("0") == .failure(.outOfRange("0")))
        #expect(PresignExpiry.seconds("1.5s") == .failure(.outOfRange("1.5s")))
        #expect(PresignExpiry.seconds("soon") == .failure(.unreadable("soon")))
    }

    @Test("ls lines: folders first, names below the prefix, sizes right-aligned, dates to the minute")
    func table() {
        let listing = BucketListing(
            bucket: "b", prefix: "music/", folders: ["music/Live/"],
            objects: [
                ListedObject(key: "music/01 Intro.m4a", size: 1_234_567, lastModified: Date(timeIntervalSince1970: 1_795_000_000), etag: "e"),
                ListedObject(key: "music/名前.flac", size: 3, lastModified: Date(timeIntervalSince1970: 1_795_000_060), etag: "f"),
            ])
        #expect(
            ListingTable.lines(listing, timeZone: TimeZone(identifier: "UTC")!) == [
                "                          DIR  Live/",
                "2026-11-18 11:06 UTC   1.2 MB  01 Intro.m4a",
                "2026-11-18 11:07 UTC  3 bytes  名前.flac",
            ])
        #expect(ListingTable.summary(listing) == "1 folder, 2 objects, 1.2 MB")
    }
}
