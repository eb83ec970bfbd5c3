import Foundation
import Hummingbird
import NIOCore
import R2UpKit

/// `GET /api/library`: the Library page as JSON, for scripts (docs/guides/serve.md).
enum LibraryAPI {
    struct Group: Encodable {
        var id: String
        var folder: String
        var title: String
        /// The summary text `status` prints ("↑ 12/18"; empty when none).
        var summary: String
        /// `status --json`'s summary name (`uploading`, `error`, `allUploaded`, `partial`), or null.
        var state: String?
        var tracks: [Track]
    }

    struct Track: Encodable {
        var path: String
        /// `status --json`'s icon name.
        var icon: String
        var key: String?
        var url: String?
    }

    static func response(_ groups: [TrackGroup<TrackStatus>], publicURL: (String) -> String) throws -> Response {
        let body = groups.map { group in
            Group(
                id: group.id, folder: group.folder, title: group.title, summary: group.summary.label(ascii: false),
                state: group.summary.name,
                tracks: group.tracks.map { Track(path: $0.path, icon: $0.icon.name, key: $0.key, url: $0.key.map(publicURL)) })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = Pages.securityHeaders
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body))))
    }
}
