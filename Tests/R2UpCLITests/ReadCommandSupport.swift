import Foundation
import R2UpTestSupport
@testable import R2UpStore
import R2UpModel

/// What the read-side command tests (history, copy-url, status) share: a database filled
/// through `Store` directly, and an environment with no S3 settings at all.
enum ReadCommands {
    /// An environment without endpoint, credentials or bucket, in UTC.
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var env = CLI.environment(home: home)
        env["TZ"] = "UTC"
        for (name, value) in extra { env[name] = value }
        return env
    }

    /// 2026-11-22 21:04:05 UTC, plus `minutes`.
    static func date(minutes: Int = 0) -> Date {
        Date(timeIntervalSince1970: 1_795_381_445 + Double(minutes * 60))
    }

    /// An upload of `key` (public URL https://pub.example.com/KEY), `minutes` after `date()`.
    static func item(_ key: String, size: Int64, minutes: Int, id: UUID = UUID(), etag: String? = "\"etag\"") -> UploadItem {
        UploadItem(
            id: id, fileName: (key as NSString).lastPathComponent, fileSize: size, r2Key: key,
            uploadDate: date(minutes: minutes), publicURL: URL(string: "https://pub.example.com/\(key)")!,
            bucket: "tracks", etag: etag)
    }

    /// Records `items` in a new database at `path`.
    static func record(_ items: [UploadItem], at path: String) throws {
        let store = try Store(path: path)
        for item in items { try store.recordUpload(item) }
    }

    /// An executable shell script `name` in `folder`.
    static func script(_ name: String, in folder: String, _ body: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// cat(1), by absolute path: the fake tools run with a PATH holding only themselves.
    static var cat: String { ["/usr/bin/cat", "/bin/cat"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "cat" }

    static func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
}
