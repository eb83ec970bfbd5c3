import Foundation
import R2UpStore
package import SigV4
package import R2UpModel
package import R2UpTransfer

// What the CLI reads of the transfer layer, in the application layer's terms: the `r2up`
// target imports R2UpKit alone (issue 25), so each thing it needs from below is here.
// Package access: an app has the session (`R2UpSession`) instead.

/// The rules of an endpoint URL.
package enum EndpointRule {
    /// Why `url` cannot be an S3 endpoint, or nil when it can.
    package static func problem(_ url: String) -> String? {
        do {
            _ = try S3Endpoint(url: url)
            return nil
        } catch {
            return error.description
        }
    }

    /// Whether `url` is a Cloudflare R2 endpoint.
    package static func isR2(_ url: String) -> Bool { (try? S3Endpoint(url: url))?.isR2 ?? false }

    /// The R2 endpoint of an account id.
    package static func r2URL(account: String) -> String { S3Endpoint.r2URL(account: account) }
}

/// User metadata given as `KEY=VALUE` pairs.
package enum UserMetadata {
    /// Why the pairs cannot be sent, or nil.
    package static func problem(_ pairs: [String]) -> String? {
        if case .failure(let problem) = ObjectMetadata.parse(pairs) { return problem.description }
        return nil
    }

    /// The pairs as headers' names and values (empty when `problem` refuses them).
    package static func parse(_ pairs: [String]) -> [String: String] { (try? ObjectMetadata.parse(pairs).get()) ?? [:] }
}

/// An object key as S3 takes it.
package enum KeyRule {
    /// The key, checked (control characters, length, dot segments); the error says why not.
    package static func checked(_ key: String) throws(UploadError) -> String { try ObjectKey.validated(key) }

    /// Why `key` cannot be the key of an upload (`--key`), or nil.
    package static func problem(_ key: String) -> String? {
        do {
            _ = try ObjectKey.validatedForWriting(key)
            return nil
        } catch {
            return error.description
        }
    }
}

/// A checksum each request carries for the server to verify.
package enum ChecksumChoice: String, Sendable, CaseIterable {
    case md5, crc32, crc32c
}

extension RunOptions {
    /// The part sizes a multipart upload may use.
    package static let partSizes = PartPlan.minimumPartSize...PartPlan.maximumPartSize

    package var partSize: Int64 {
        get { upload.partSize }
        set { upload.partSize = newValue }
    }

    package var multipartThreshold: Int64 {
        get { upload.multipartThreshold }
        set { upload.multipartThreshold = newValue }
    }

    /// nil: the endpoint's default (MD5 for R2, CRC-32C elsewhere).
    package var checksum: ChecksumChoice? {
        get { upload.integrityCheck.flatMap { ChecksumChoice(rawValue: $0.rawValue) } }
        set { upload.integrityCheck = newValue.flatMap { IntegrityCheck(rawValue: $0.rawValue) } }
    }

    /// Whether a HEAD confirms a single PUT; nil: the server's profile decides.
    package var headAfterPut: Bool? {
        get { upload.headAfterPut }
        set { upload.headAfterPut = newValue }
    }

    /// Tries of a failed request, the first included.
    package var maxAttempts: Int {
        get { upload.maxAttempts }
        set { upload.maxAttempts = newValue }
    }
}

extension SyncOptions {
    /// The headers every object of the sync is stored with.
    package mutating func setAttributes(cacheControl: String?, metadata: [String: String]) {
        attributes = ObjectAttributes(cacheControl: cacheControl, metadata: metadata)
    }
}

extension UploadService {
    /// A URL that fetches `key` without credentials until it expires.
    package func presignedURL(key: String, expires seconds: Int) throws(SigV4Error) -> String {
        try client.presignedURL(bucket: bucket, key: key, expires: seconds)
    }

    /// Deletes `key` from the bucket.
    package func deleteObject(key: String) async throws(S3ClientError) {
        try await client.deleteObject(bucket: bucket, key: key)
    }

    /// The adaptive depth's report for `--verbose`.
    package var depthLine: String { uploader.slots.depthReport.line }

    /// The adaptive depth this service's runs used so far, for `--json`.
    package var depthReport: DepthReport { uploader.slots.depthReport }
}

extension Puller {
    /// The adaptive depth's report for `--verbose`.
    package var depthLine: String { depthReport.line }
}

extension SyncSummary {
    /// The adaptive depth's report for `--verbose`, when the run sent anything.
    package var depthLine: String? { depth?.line }
}

/// A failed download in the terms the commands print.
package enum DownloadFailure {
    /// The line and exit status of a download error; nil for any other error.
    package static func diagnosis(_ error: any Error) -> Diagnosis? { (error as? DownloadError)?.diagnosis }

    /// The line and exit status of a download error.
    package static func diagnosis(_ error: DownloadError) -> Diagnosis { error.diagnosis }

    /// Whether the download was cancelled (Ctrl-C, SIGTERM): left to resume, not failed.
    package static func isCancellation(_ error: any Error) -> Bool { (error as? DownloadError)?.isCancellation ?? false }

    /// Why a track was not fetched, after its path; the pull wording where it fits.
    package static func fetchMessage(_ error: DownloadError, key: String) -> String {
        switch error {
        case .notFound(_, let bucket):
            return "its object '\(key)' is no longer in bucket '\(bucket)'; nothing fetched"
        case .objectChanged:
            return "its object '\(key)' was replaced since its upload (the ETag is not the recorded one); nothing fetched"
        default:
            return error.diagnosis.message
        }
    }
}

extension SettingOverrides {
    /// `--path-style` (true) or `--virtual-hosted` (false): how bucket URLs are built.
    package mutating func setAddressing(pathStyle: Bool) { addressing = pathStyle ? .pathStyle : .virtualHosted }
}

extension QueueEvent {
    /// A finished upload's file and history row, for `push`'s URLs and `push --json` in track order.
    package var completedUpload: (path: String, item: UploadItem)? {
        if case .completed(let job, let item, _) = self { return (job.path, item) }
        return nil
    }
}
