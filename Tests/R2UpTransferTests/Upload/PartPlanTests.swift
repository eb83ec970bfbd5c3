import Testing
@testable import R2UpModel
@testable import R2UpTransfer

@Suite("Part plans keep R2's rules")
struct PartPlanTests {
    static let mib: Int64 = 1 << 20

    @Test(
        "part size grows in whole MiB only when 10,000 parts would not hold the file",
        arguments: [
            (fileSize: 8 * mib + 1, preferred: 8 * mib, partSize: 8 * mib, parts: 2),
            (fileSize: 100 * mib, preferred: 8 * mib, partSize: 8 * mib, parts: 13),
            (fileSize: 80_000 * mib, preferred: 8 * mib, partSize: 8 * mib, parts: 10_000),
            (fileSize: 80_000 * mib + 1, preferred: 8 * mib, partSize: 9 * mib, parts: 8_889),
            (fileSize: 1 << 40, preferred: 5 * mib, partSize: 105 * mib, parts: 9_987),
            (fileSize: 0, preferred: 5 * mib, partSize: 5 * mib, parts: 1),
        ])
    func sizing(fileSize: Int64, preferred: Int64, partSize: Int64, parts: Int) throws {
        let plan = try PartPlan(fileSize: fileSize, preferredPartSize: preferred)
        #expect(plan.partSize == partSize)
        #expect(plan.partCount == parts)
    }

    @Test("every part but the last has the same size, and the parts add up to the file")
    func ranges() throws {
        let plan = try PartPlan(fileSize: 20 * Self.mib + 3, preferredPartSize: 8 * Self.mib)
        let ranges = (1...plan.partCount).map { plan.range(ofPart: $0) }
        #expect(ranges.map(\.length) == [8 * Self.mib, 8 * Self.mib, 4 * Self.mib + 3])
        #expect(ranges.map(\.offset) == [0, 8 * Self.mib, 16 * Self.mib])
    }

    @Test("part sizes outside 5 MiB to 5 GiB are refused", arguments: [5 * mib - 1, 5 * (mib << 10) + 1])
    func outOfRange(size: Int64) {
        #expect(throws: UploadError.invalidPartSize(size)) { try PartPlan(fileSize: 1, preferredPartSize: size) }
    }

    @Test("a file larger than 10,000 parts of 5 GiB is refused")
    func tooLarge() {
        let size = 10_000 * (5 << 30) + 1 as Int64
        #expect(throws: UploadError.fileTooLarge(size)) { try PartPlan(fileSize: size, preferredPartSize: 8 * Self.mib) }
    }

    @Test("a resumed upload keeps the part size it started with")
    func fixedSize() throws {
        let plan = try PartPlan(fileSize: 100 * Self.mib, fixedPartSize: 6 * Self.mib)
        #expect(plan.partSize == 6 * Self.mib)
        #expect(plan.partCount == 17)
    }
}

@Suite("Small pure helpers")
struct HelperTests {
    @Test("sizes and rates parse like rclone's", arguments: [
        ("1048576", Int64(1_048_576)), ("8M", 8 << 20), ("8MiB", 8 << 20), ("500K", 512_000), ("1.5G", 1_610_612_736),
        ("10M/s", 10 << 20), ("5m", 5 << 20),
    ])
    func byteSizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test("nonsense sizes are rejected", arguments: ["", "fast", "-1M", "M", "1X", "1e30"])
    func badSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test("content types for audio come from the extension", arguments: [
        ("song.m4a", "audio/mp4"), ("SONG.MP3", "audio/mpeg"), ("a.flac", "audio/flac"), ("a.wav", "audio/wav"),
        ("a.aiff", "audio/aiff"), ("a.ogg", "audio/ogg"), ("a.opus", "audio/opus"), ("a.aac", "audio/aac"),
        ("cover.jpg", "image/jpeg"), ("noext", "application/octet-stream"), (".hidden", "application/octet-stream"),
    ])
    func contentTypes(name: String, type: String) {
        #expect(ContentType.forFile(named: name) == type)
    }

    @Test("public URLs encode each key segment once and keep slashes")
    func publicURLs() throws {
        let endpoint = try S3Endpoint(url: "http://127.0.0.1:8333")
        #expect(
            PublicURL.make(key: "albums/Été 2026/01 #1+2.m4a", bucket: "b", publicBase: "https://cdn.example.com/", endpoint: endpoint)
                == "https://cdn.example.com/albums/%C3%89t%C3%A9%202026/01%20%231%2B2.m4a")
        #expect(
            PublicURL.make(key: "a b.mp3", bucket: "music", publicBase: nil, endpoint: endpoint)
                == "http://127.0.0.1:8333/music/a%20b.mp3")
        let r2 = try S3Endpoint(url: "https://acct.r2.cloudflarestorage.com", addressing: .virtualHosted)
        #expect(PublicURL.make(key: "x", bucket: "music", publicBase: nil, endpoint: r2) == "https://acct.r2.cloudflarestorage.com/music/x")
    }

    @Test("keys are NFC, non-empty and at most 1,024 bytes")
    func keys() throws {
        #expect(try ObjectKey.validated("e\u{0301}") == "\u{00E9}")
        #expect(throws: UploadError.invalidKey("the key is empty")) { try ObjectKey.validated("") }
        #expect(throws: UploadError.self) { try ObjectKey.validated(String(repeating: "é", count: 513)) }
        #expect(try ObjectKey.validated(String(repeating: "é", count: 512)).utf8.count == 1024)
        #expect(ObjectKey.forFile(named: "a.m4a", prefix: "albums") == "albums/a.m4a")
        #expect(ObjectKey.forFile(named: "a.m4a", prefix: "albums/") == "albums/a.m4a")
        #expect(ObjectKey.forFile(named: "a.m4a", prefix: nil) == "a.m4a")
    }

    @Test("endpoints: path-style and virtual-hosted hosts and paths")
    func endpoints() throws {
        let path = try S3Endpoint(url: "http://127.0.0.1:8333/")
        #expect(path.authority(bucket: "b") == "127.0.0.1:8333")
        #expect(path.path(bucket: "b", key: "k/x y") == "/b/k/x y")
        #expect(path.path(bucket: "b", key: nil) == "/b/")
        let virtual = try S3Endpoint(url: "https://acct.r2.cloudflarestorage.com", addressing: .virtualHosted)
        #expect(virtual.isR2)
        #expect(virtual.authority(bucket: "music") == "music.acct.r2.cloudflarestorage.com")
        #expect(virtual.path(bucket: "music", key: "a") == "/a")
        for bad in ["ftp://x", "not a url", "http://", "https://host?x=1"] {
            #expect(throws: ConfigurationError.invalidEndpoint(bad)) { try S3Endpoint(url: bad) }
        }
    }
}
