package import Foundation
package import R2UpModel
package import R2UpStore

/// The database as the CLI holds it: the store behind the application layer, so the `r2up`
/// target never imports R2UpStore (issue 25). Package access: apps use ``R2UpSession``.
package struct LocalStore: Sendable {
    let store: Store

    /// Opens (or creates) the database at `path`, as the commands that write do.
    package init(path: String) throws(StoreError) {
        store = try Store(path: path)
    }

    init(_ store: Store) { self.store = store }

    /// The rule of the read-only commands (history, status, queue, copy-url, du): the database at
    /// `path`, or nil when it does not exist yet; reading never creates it.
    package static func openIfPresent(forReading path: String) throws(StoreError) -> LocalStore? {
        try Store.openIfPresent(forReading: path).map(LocalStore.init)
    }

    /// Opens the database to write only when it exists (cancelling never creates one).
    package static func openIfPresent(path: String) throws(StoreError) -> LocalStore? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try LocalStore(path: path)
    }

    // MARK: - Reads the commands render

    package func tracks(under folder: String) throws(StoreError) -> [TrackRecord] { try store.tracks(under: folder) }

    /// The tags recorded for the tracks under `folder` (all when nil), by path.
    package func tags(under folder: String?) throws(StoreError) -> [String: AudioTags] {
        try store.storedTags(under: folder).compactMapValues(\.tags)
    }

    package func searchUploads(containing text: String?, since: Date?, limit: Int?) throws(StoreError) -> [UploadItem] {
        try store.searchUploads(containing: text, since: since, limit: limit)
    }

    package func upload(matching text: String) throws(StoreError) -> UploadItem? { try store.upload(matching: text) }
    package func uploads(idPrefix prefix: String) throws(StoreError) -> [UploadItem] { try store.uploads(idPrefix: prefix) }
    package func uploadCount() throws(StoreError) -> Int { try store.uploadCount() }
    package func recentUploads(limit: Int) throws(StoreError) -> [UploadItem] { try store.recentUploads(limit: limit) }
    package func deletionDates(of items: [UploadItem]) throws(StoreError) -> [UUID: Date] { try store.deletionDates(of: items) }
    package func liveUpload(sameAs item: UploadItem) throws(StoreError) -> UploadItem? { try store.liveUpload(sameAs: item) }

    package func recordDeletions(bucket: String, keys: [String]) throws(StoreError) {
        try store.recordDeletions(bucket: bucket, keys: keys)
    }
}

// The runners, given the CLI's handle.
extension PushRunner {
    package init(database: LocalStore, service: UploadService) { self.init(store: database.store, service: service) }
}

extension RetryRunner {
    package init(database: LocalStore, service: UploadService) { self.init(store: database.store, service: service) }
}

extension CatalogPublisher {
    package init(service: UploadService, database: LocalStore) { self.init(service: service, store: database.store) }
}

extension Offloader {
    package init(service: UploadService, database: LocalStore) { self.init(service: service, store: database.store) }
}

extension Puller {
    package convenience init(service: UploadService, database: LocalStore?, overwrite: Bool = false) {
        self.init(service: service, store: database?.store, overwrite: overwrite)
    }
}

extension QueueReport {
    package init(database: LocalStore, now: Date = Date()) throws(StoreError) { try self.init(store: database.store, now: now) }
}

extension TrackScan {
    package static func tracks(under folder: String, database: LocalStore?, bucket: String? = nil) throws(StoreError) -> ScannedTracks {
        try tracks(under: folder, store: database?.store, bucket: bucket)
    }
}

extension SpaceUsage {
    package static func measure(
        folder: String, database: LocalStore?, groups named: [String: String] = [:], by grouping: StatusGrouping = .folder
    ) throws(StoreError) -> SpaceUsage {
        try measure(folder: folder, store: database?.store, groups: named, by: grouping)
    }

    package static func measure(database: LocalStore?) throws(StoreError) -> SpaceUsage { try measure(store: database?.store) }
}
