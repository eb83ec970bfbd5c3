import Foundation
import Testing
@testable import R2UpModel
@testable import R2UpTransfer

/// Which keys may become files, and where (zip-slip style keys are refused before any byte moves).
@Suite("Download paths")
struct DownloadPathTests {
    @Test(
        "safe keys map below the prefix, a single key to its last segment",
        arguments: [
            ("albums/x/01.m4a", "albums/x/", "01.m4a"),
            ("albums/x/disc 2/02.m4a", "albums/x/", "disc 2/02.m4a"),
            ("top.m4a", "", "top.m4a"),
            ("a/..b/c..", "a/", "..b/c.."),
        ] as [(String, String, String)])
    func safe(key: String, prefix: String, expected: String) throws {
        #expect(try DownloadPath.relativePath(key: key, prefix: prefix) == expected)
    }

    @Test("a single key keeps only its name")
    func single() throws {
        #expect(try DownloadPath.relativePath(key: "deep/down/track.flac", prefix: nil) == "track.flac")
    }

    @Test(
        "hostile keys are refused with the reason",
        arguments: [
            ("../x", nil, "a '..' segment would lead outside the destination"),
            ("a/../../x", "a/", "a '..' segment would lead outside the destination"),
            ("a/..", "a/", "a '..' segment would lead outside the destination"),
            ("/etc/passwd", nil, "it starts with '/', an absolute path"),
            ("a//etc/passwd", "a/", "below the prefix it starts with '/', an absolute path"),
            ("a\\b", nil, "it contains a backslash, a path separator on Windows"),
            ("p/a/./b", "p/", "it has an empty or '.' path segment"),
            ("p/a//b", "p/", "it has an empty or '.' path segment"),
        ] as [(String, String?, String)])
    func refused(key: String, prefix: String?, reason: String) {
        #expect(throws: DownloadError.unsafeKey(key: key, reason: reason)) {
            try DownloadPath.relativePath(key: key, prefix: prefix)
        }
    }

    @Test("a link inside the destination that leads out of it is refused")
    func linkOut() throws {
        let root = FileManager.default.temporaryDirectory.path + "/r2up-dl-\(UUID().uuidString)"
        let outside = root + "-outside"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: outside)
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/album", withDestinationPath: outside)
        #expect(throws: DownloadError.self) { try DownloadPath.prepareFolder(for: "album/x.m4a", in: root) }
        #expect(try DownloadPath.prepareFolder(for: "fine/x.m4a", in: root) == root + "/fine/x.m4a")
    }

    @Test("more bytes than the folder's free space are refused before the download starts")
    func freeSpace() throws {
        let folder = FileManager.default.temporaryDirectory.path
        #expect(throws: Never.self) { try ObjectDownloader.checkFreeSpace(folder: folder, needed: 1 << 20) }
        do {
            try ObjectDownloader.checkFreeSpace(folder: folder, needed: 1 << 60)
            Issue.record("an exabyte fitted")
        } catch {
            guard case .notEnoughSpace(let path, let needed, _) = error else { throw error }
            #expect(path == folder && needed == 1 << 60)
            #expect(error.description.contains("not enough free space: 1024 PB needed") || error.description.contains("not enough free space"))
        }
    }

    @Test("exit codes: refused keys and unknown names 2, failed downloads 1, access denied 3 (worded for reading)")
    func diagnoses() {
        #expect(DownloadError.unsafeKey(key: "../x", reason: "r").diagnosis.category == .badInput)
        #expect(DownloadError.notFound(target: "x", bucket: "b").diagnosis.category == .badInput)
        #expect(DownloadError.objectChanged(key: "x").diagnosis.category == .uploadFailed)
        let denied = DownloadError.s3(key: "x", .service(S3ServiceError(status: 403, code: "AccessDenied", message: "no")))
        #expect(denied.diagnosis == Diagnosis(category: .configuration, message: "access denied (AccessDenied); the credentials are not allowed to read this bucket"))
        // A HEAD's 403 has no body: a wrong secret looks the same as a missing permission.
        var bodiless = S3ServiceError(status: 403, code: "AccessDenied", message: "")
        bodiless.codeFromStatus = true
        let said = "access denied (HTTP 403, no reason given): either the secret access key is wrong (check the secret access key setting or the profile) or the credentials may not read this bucket"
        #expect(DownloadError.s3(key: "x", .service(bodiless)).diagnosis == Diagnosis(category: .configuration, message: said))
        #expect(S3ClientError.service(bodiless).diagnosis(subject: nil) == Diagnosis(category: .configuration, message: said))
        // A request about no key (a listing) starts the line with nothing, not ": ".
        let slow = S3ClientError.service(S3ServiceError(status: 503, code: "SlowDown", message: "slow"))
        #expect(DownloadError.s3(key: "", slow).diagnosis.message == "SlowDown (HTTP 503): slow")
        #expect(DownloadError.s3(key: "a b", slow).diagnosis.message == "a b: SlowDown (HTTP 503): slow")
    }

    @Test("parts are 8 MiB, the last one shorter; an empty object has none")
    func parts() {
        let parts = DownloadPart.plan(size: 20 << 20, partSize: 8 << 20)
        #expect(parts.map(\.length) == [8 << 20, 8 << 20, 4 << 20])
        #expect(parts.map(\.offset) == [0, 8 << 20, 16 << 20])
        #expect(parts[2].range == Int64(16 << 20)...Int64((20 << 20) - 1))
        #expect(DownloadPart.plan(size: 0, partSize: 8 << 20).isEmpty)
    }
}
