import Foundation
import R2UpTransfer

extension R2UpSession {
    /// How long a presigned URL from ``playURL(for:)`` plays: an album and then some.
    static let playSeconds = 6 * 3600

    /// A URL a browser plays `key` from: its public URL where a public URL base is configured,
    /// else a presigned GET that needs no credentials for six hours (a private bucket).
    public func playURL(for key: String) -> String {
        guard service.publicBase == nil, let url = try? service.presignedURL(key: key, expires: Self.playSeconds) else {
            return publicURL(for: key)
        }
        return url
    }

    /// The catalog `r2up catalog publish --prefix PREFIX` wrote (its `index.json`): one GET.
    /// nil when there is none, it cannot be read, or it is not r2up's (browse the folders instead).
    public func catalogIndex(prefix: String) async -> CatalogIndex? {
        guard
            let reply = try? await service.client.getObject(
                bucket: service.bucket, key: prefix + CatalogPublisher.jsonName, sink: .memory(limit: 256 << 20)),
            reply.status == 200, let index = try? JSONDecoder().decode(CatalogIndex.self, from: Data(reply.body)),
            index.schema == CatalogIndex.schema
        else { return nil }
        return index
    }
}
