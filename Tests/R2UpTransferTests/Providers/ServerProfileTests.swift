import Foundation
import Testing
@testable import R2UpTransfer

@Suite("Server profiles")
struct ServerProfileTests {
    @Test("recognised by host or Server header; what each verifies")
    func identify() throws {
        let local = try S3Endpoint(url: "http://127.0.0.1:18306")
        #expect(ServerProfile.identify(endpoint: try S3Endpoint(url: "https://abc.r2.cloudflarestorage.com"), serverHeader: "cloudflare") == .r2)
        #expect(ServerProfile.identify(endpoint: try S3Endpoint(url: "https://s3.eu-west-1.amazonaws.com"), serverHeader: nil) == .amazonS3)
        #expect(ServerProfile.identify(endpoint: local, serverHeader: "SeaweedFS 8000GB 4.48") == .seaweedFS)
        #expect(ServerProfile.identify(endpoint: local, serverHeader: "MinIO") == .minIO)
        #expect(ServerProfile.identify(endpoint: local, serverHeader: "Werkzeug/3.1.9 Python/3.11.7") == .moto)
        #expect(ServerProfile.identify(endpoint: local, serverHeader: "nginx") == .unknown)
        #expect(ServerProfile.identify(endpoint: local, serverHeader: nil) == .unknown)
        #expect(ServerProfile.r2.verifies(.md5) && !ServerProfile.r2.verifies(.crc32c))
        #expect(ServerProfile.r2.singlePutETagIsMD5 && ServerProfile.seaweedFS.singlePutETagIsMD5)
        #expect(!ServerProfile.amazonS3.singlePutETagIsMD5 && !ServerProfile.unknown.singlePutETagIsMD5)
        #expect(ServerProfile.seaweedFS.verifies(.crc32c) && ServerProfile.amazonS3.verifies(.crc32c))
        #expect(IntegrityCheck.allCases.allSatisfy { !ServerProfile.moto.verifies($0) && !ServerProfile.unknown.verifies($0) })
        // The default check of each known server is one it verifies: no HEAD by default there.
        #expect(ServerProfile.r2.verifies(IntegrityCheck.defaultCheck(for: try S3Endpoint(url: "https://a.r2.cloudflarestorage.com"))))
        #expect(ServerProfile.seaweedFS.verifies(IntegrityCheck.defaultCheck(for: local)))
    }

    @Test("an ETag is compared with the MD5 sent only when it is a plain hex MD5")
    func md5ETag() {
        #expect(FileUploader.hex(base64: "XUFAKrxLKna5cZ2REBfFkg==") == "5d41402abc4b2a76b9719d911017c592")
        #expect(FileUploader.isHexMD5("5d41402abc4b2a76b9719d911017c592"))
        #expect(FileUploader.isHexMD5("5D41402ABC4B2A76B9719D911017C592"))
        #expect(!FileUploader.isHexMD5("5d41402abc4b2a76b9719d911017c592-2"))
        #expect(!FileUploader.isHexMD5("5d41402abc4b2a76b9719d911017c59g"))
        #expect(!FileUploader.isHexMD5(""))
    }
}
