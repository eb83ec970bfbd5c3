public import Foundation
import SigV4
public import R2UpModel
public import R2UpTransfer

/// Tuning for a run of uploads.
public struct RunOptions: Sendable, Equatable {
    /// Requests in flight at once, parts included.
    public var concurrency = 4
    /// Total upload rate in bytes a second; nil is unlimited.
    public var bandwidthLimit: Int64?
    public var upload = UploadSettings()
    public var lowSpeedTimeSeconds = 30
    public var connectTimeoutSeconds = 10

    public init() {}
}

/// One file to push and where it goes.
public struct PushRequest: Sendable, Equatable {
    public var path: String
    public var key: String
    public var attributes: ObjectAttributes
    /// A folder's file, planned because its track was not uploaded as the file is: not queued
    /// when another run has uploaded it since (`JobDisposition.uploaded`). A file named on its
    /// own is uploaded again, as asked.
    public var unlessUploaded: Bool

    /// The size and mtime a folder's scan saw: the file is queued as seen and opened only when
    /// it uploads, so one that cannot be read fails as a job (its track shows why, as in sync).
    /// nil (a file named on the command line): opened and checked before anything is written.
    public var seen: SeenFile?

    /// Whether push found the file in a folder (not named on the command line): a failure to
    /// take it counts as a failed upload, not as bad input (`Diagnosis.ofFileFound`).
    public var isFolderFile: Bool { unlessUploaded }

    public init(path: String, key: String, attributes: ObjectAttributes, unlessUploaded: Bool = false, seen: SeenFile? = nil) {
        self.path = path
        self.key = key
        self.attributes = attributes
        self.unlessUploaded = unlessUploaded
        self.seen = seen
    }
}

/// The S3 side of r2up, built once from settings: one engine, one client, one slot limit.
public final class UploadService: Sendable {
    public let settings: Settings
    public let options: RunOptions
    public let endpoint: S3Endpoint
    public let bucket: String
    public let client: S3Client
    public let uploader: FileUploader

    public init(settings: Settings, options: RunOptions) throws(ConfigurationError) {
        self.settings = settings
        self.options = options
        endpoint = try settings.requireEndpoint()
        bucket = try settings.requireBucket()
        let credentials = try settings.requireCredentials()
        var engineOptions = TransferEngine.Options()
        engineOptions.caBundle = settings.caBundle
        engineOptions.bandwidthLimit = options.bandwidthLimit
        engineOptions.lowSpeedTimeSeconds = options.lowSpeedTimeSeconds
        engineOptions.connectTimeoutMilliseconds = options.connectTimeoutSeconds * 1000
        engineOptions.maxConnections = max(16, options.concurrency * 2)
        let engine: TransferEngine
        do { engine = try TransferEngine(options: engineOptions) } catch {
            throw .invalidValue(setting: "libcurl", value: "", reason: error.description)
        }
        client = S3Client(endpoint: endpoint, region: settings.region.value, credentials: credentials, engine: engine)
        uploader = FileUploader(
            client: client, settings: options.upload, slots: TransferSlots(limit: options.concurrency))
    }

    deinit { client.engine.shutdown() }

    /// The public URL of a key in this service's bucket, or in another one (a job queued
    /// with another --bucket): the configured public base belongs to this bucket only.
    public func publicURL(for key: String, in otherBucket: String? = nil) -> String {
        let target = otherBucket ?? bucket
        let base = target == bucket ? settings.publicURL?.value : nil
        return PublicURL.make(key: key, bucket: target, publicBase: base, endpoint: endpoint)
    }

    /// `publicURL(for:in:)` as a URL, made before anything is uploaded for the key: the base is
    /// validated with the settings and the key percent-encoded, so a refusal here is a bad key.
    public func publicObjectURL(for key: String, in otherBucket: String? = nil) throws(UploadError) -> URL {
        guard let url = URL(string: publicURL(for: key, in: otherBucket)) else {
            throw .invalidKey("no public URL can be made for '\(key)'")
        }
        return url
    }

    /// Uploads one file now, without the queue.
    public func upload(_ request: PushRequest, journal: (any UploadJournal)? = nil) async throws(UploadError) -> UploadOutcome {
        let file = try LocalFile(path: request.path)
        return try await uploader.upload(file, bucket: bucket, key: request.key, attributes: request.attributes, journal: journal)
    }
}

extension UploadService {
    /// Explains a failure; an AccessDenied is looked into once with a HEAD of the bucket,
    /// because S3 and R2 answer AccessDenied, not NoSuchBucket, when the token cannot list.
    public func diagnose(_ error: any Error, subject: String?) async -> Diagnosis {
        let diagnosis = Diagnosis(error, subject: subject)
        guard case .s3(.service(let failure))? = error as? UploadError, failure.code == "AccessDenied" else {
            return diagnosis
        }
        if case .service(let head)? = await client.headBucketFailure(bucket), head.status == 404 {
            return Diagnosis(
                status: .configuration,
                message: "the bucket '\(bucket)' does not exist (NoSuchBucket); check --bucket or R2UP_BUCKET")
        }
        return diagnosis
    }
}
