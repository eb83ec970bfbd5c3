import Foundation
import Testing
@testable import R2UpModel
@testable import R2UpStore

@Suite("Sizes for people")
struct ByteCountTests {
    static let sizes: [(bytes: Int64, text: String)] = [
        // the documented values
        (Int64(500), "500 bytes"),
        (1024, "1 KB"),
        (1_048_576, "1 MB"),
        (2_500_000, "2.4 MB"),
        (1_073_741_824, "1 GB"),
        // the seed's usage example: 2,048,576 bytes
        (2_048_576, "2 MB"),
        // edges the seed leaves open
        (0, "0 bytes"),
        (1, "1 byte"),
        (2, "2 bytes"),
        (1023, "1023 bytes"),
        (1025, "1 KB"),
        (1536, "1.5 KB"),
        (1280, "1.3 KB"),
        (10 * 1024 + 51, "10 KB"),
        (1_048_575, "1 MB"),
        (1_073_741_823, "1 GB"),
        (5 * 1_073_741_824 + 536_870_912, "5.5 GB"),
        (1_099_511_627_776, "1 TB"),
        (Int64.max, "8 EB"),
        (-2048, "-2 KB"),
    ]

    @Test(
        "DESIGN §3 and seed 002's table, and the edges around it",
        arguments: sizes)
    func formats(bytes: Int64, text: String) {
        #expect(ByteCount.string(bytes) == text)
    }

    @Test("an UploadItem's formattedFileSize uses it")
    func uploadItem() {
        let item = UploadItem(
            fileName: "a.flac", fileSize: 2_500_000, r2Key: "a.flac", uploadDate: Date(),
            publicURL: URL(string: "https://example.com/a.flac")!, bucket: "b", etag: nil)
        #expect(item.formattedFileSize == "2.4 MB")
    }
}
