import Foundation
import Testing
@testable import R2UpModel

/// The hand-written path helpers give exactly what Foundation gives.
@Suite("File paths")
struct FilePathTests {
    @Test(
        "name is NSString's lastPathComponent",
        arguments: ["/music/a b.m4a", "/music/album/", "relative/track.flac", "track.mp3", "/", "/music//x.m4a", "/é/ü.m4a"])
    func name(path: String) {
        #expect(FilePath.name(path) == (path as NSString).lastPathComponent)
    }

    @Test(
        "absolute is URL's standardized path",
        arguments: [
            "/music/a.m4a", "/music/./a.m4a", "/music/x/../a.m4a", "/music//a.m4a", "/music/a.m4a/", "/music/..a/.b",
            "relative/a.m4a", "./a.m4a", "/music/...",
        ])
    func absolute(path: String) {
        #expect(FilePath.absolute(path) == URL(fileURLWithPath: path).standardizedFileURL.path)
    }
}
