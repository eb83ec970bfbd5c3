package import Foundation
import SigV4
package import R2UpModel
package import R2UpTransfer

/// Tuning for a run of uploads.
package struct RunOptions: Sendable, Equatable {
    /// Requests in flight at once, parts included: nil finds it (`DepthController`), a number pins it.
    package var concurrency: Int?
    /// Total upload rate in bytes a second; nil is unlimited.
    package var bandwidthLimit: Int64?
    package var upload = UploadSettings()
    package var lowSpeedTimeSeconds = 30
    package var connectTimeoutSeconds = 10

    package init() {}

    /// The upper bound of `--concurrency`.
    package static let maximumConcurrency = DepthController.maximumDepth

    /// The slots a run's requests share: pinned or adaptive; they keep `tuning` (the engine's
    /// low-speed limit and upload buffer size) in step with their depth and the link they measure.
    /// `overTLS`: each request in flight then holds a TLS connection, which costs more memory.
    package func makeSlots(tuning: TransferTuning? = nil, overTLS: Bool = false) -> TransferSlots {
        let cost = overTLS ? DepthController.residentPerTLSRequest : DepthController.residentPerRequest
        return TransferSlots(
            controller: concurrency.map { DepthController(pinned: $0, requestMemory: cost) }
                ?? DepthController(ceiling: Self.descriptorCeiling(), requestMemory: cost),
            tuning: tuning, resident: ProcessMemory.residentBytes)
    }

    /// Each request in flight holds a socket and often a file: the adaptive depth stays within
    /// the open-file limit, raised first to its hard limit (up to 8,192) as Go programs do.
    /// A soft limit of 1,024 that cannot be raised allows 320; macOS's 256 allows 64.
    static func descriptorCeiling() -> Int {
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 64 }
        let wanted = min(limit.rlim_max, 8_192)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let soft = Int(clamping: limit.rlim_cur)
        return max(2, min(DepthController.maximumDepth, (soft - 64) / 3))
    }

    /// The most requests this run may have in flight.
    package var maximumInFlight: Int { concurrency ?? DepthController.maximumDepth }
}

/// One file to push and where it goes.
package struct PushRequest: Sendable, Equatable {
    package var path: String
    package var key: String
    package var attributes: ObjectAttributes
    /// A folder's file, planned because its track was not uploaded as the file is: not queued
    /// when another run has uploaded it since (`JobDisposition.uploaded`). A file named on its
    /// own is uploaded again, as asked.
    package var unlessUploaded: Bool

    /// The size and mtime a folder's scan saw: the file is queued as seen and opened only when
    /// it uploads, so one that cannot be read fails as a job (its track shows why, as in sync).
    /// nil (a file named on the command line): opened and checked before anything is written.
    package var seen: SeenFile?

    /// Where a scan saw the file (device and inode), recorded on its track so a later sync
    /// knows it after a rename. nil: not recorded.
    package var place: FilePlace?

    /// Whether push found the file in a folder (not named on the command line): a failure to
    /// take it counts as a failed upload, not as bad input (`Diagnosis.ofFileFound`).
    package var isFolderFile: Bool { unlessUploaded }

    package init(
        path: String, key: String, attributes: ObjectAttributes, unlessUploaded: Bool = false, seen: SeenFile? = nil,
        place: FilePlace? = nil
    ) {
        self.path = path
        self.key = key
        self.attributes = attributes
        self.unlessUploaded = unlessUploaded
        self.seen = seen
        self.place = place
    }

    /// A scanned file's request, queued as the scan saw it.
    package init(scanned file: ScannedFile, key: String, attributes: ObjectAttributes, unlessUploaded: Bool = true) {
        self.init(
            path: file.path, key: key, attributes: attributes, unlessUploaded: unlessUploaded,
            seen: SeenFile(size: file.size, mtimeNs: file.mtimeNs),
            place: file.inode == 0 ? nil : FilePlace(device: file.device, inode: file.inode))
    }
}

/// The S3 side of r2up, built once from a configuration: one engine, one client, one slot limit.
package final class UploadService: Sendable {
    package let options: RunOptions
    package let endpoint: S3Endpoint
    package let bucket: String
    package let client: S3Client
    package let uploader: FileUploader
    /// Each new transfer's low-speed limit and upload buffer cap, kept in step with the depth and
    /// the measured link by the run's slots.
    package let tuning = TransferTuning()
    /// The public URL base of `bucket`, checked.
    let publicBase: String?

    /// The CLI's way in: its settings become a `R2UpSession.Configuration`, as an app's values do.
    package convenience init(settings: Settings, options: RunOptions) throws(ConfigurationError) {
        var configuration = try R2UpSession.Configuration(settings: settings)
        configuration.concurrency = options.concurrency
        configuration.bandwidthLimit = options.bandwidthLimit
        try self.init(configuration: configuration, options: options)
    }

    /// - Parameter options: tuning; its concurrency is the configuration's.
    init(configuration: R2UpSession.Configuration, options: RunOptions) throws(ConfigurationError) {
        let checked = try configuration.checkedConnection()
        var options = options
        options.concurrency = configuration.concurrency
        options.bandwidthLimit = configuration.bandwidthLimit
        self.options = options
        endpoint = checked.endpoint
        bucket = checked.bucket
        publicBase = checked.publicURL
        var engineOptions = TransferEngine.Options()
        engineOptions.caBundle = configuration.caBundle
        engineOptions.bandwidthLimit = options.bandwidthLimit
        engineOptions.lowSpeedTimeSeconds = options.lowSpeedTimeSeconds
        engineOptions.tuning = tuning
        engineOptions.connectTimeoutMilliseconds = options.connectTimeoutSeconds * 1000
        // Keep-alive connections up to the depth: none is set up twice in a run.
        engineOptions.maxConnections = max(16, options.maximumInFlight + 4)
        let engine: TransferEngine
        do { engine = try TransferEngine(options: engineOptions) } catch {
            throw .invalidValue(setting: "libcurl", value: "", reason: error.description)
        }
        client = S3Client(endpoint: endpoint, region: checked.region, credentials: checked.credentials, engine: engine)
        uploader = FileUploader(
            client: client, settings: options.upload, slots: options.makeSlots(tuning: tuning, overTLS: endpoint.usesTLS))
    }

    deinit { client.engine.shutdown() }

    /// Sends the request that names the server now (`FileUploader.nameServerAhead`), while the
    /// store opens and the files are scanned and queued, so the first wave of conditional writes
    /// does not wait a round trip for it. Nothing where the endpoint names the server (R2, S3),
    /// a reply of this service already has, or the run writes with no condition (`--overwrite`).
    /// - Returns: whether the request was started.
    @discardableResult
    package func nameServerAhead(replace: ReplacePolicy) -> Bool {
        guard replace != .overwrite else { return false }
        return uploader.nameServerAhead(bucket: bucket)
    }

    /// One HEAD of the bucket, its answer unused: after any reply, a refused connection is a
    /// file's retryable failure, not the run's (`diagnose`).
    package func reachServer() async {
        _ = await client.headBucketFailure(bucket)
    }

    /// The public URL of a key in this service's bucket, or in another one (a job queued
    /// with another --bucket): the configured public base belongs to this bucket only.
    package func publicURL(for key: String, in otherBucket: String? = nil) -> String {
        let target = otherBucket ?? bucket
        let base = target == bucket ? publicBase : nil
        return PublicURL.make(key: key, bucket: target, publicBase: base, endpoint: endpoint)
    }

    /// `publicURL(for:in:)` as a URL, made before anything is uploaded for the key: the base is
    /// validated with the settings and the key percent-encoded, so a refusal here is a bad key.
    package func publicObjectURL(for key: String, in otherBucket: String? = nil) throws(UploadError) -> URL {
        guard let url = URL(string: publicURL(for: key, in: otherBucket)) else {
            throw .invalidKey("no public URL can be made for '\(key)'")
        }
        return url
    }
}

extension UploadService {
    /// Explains a failure; an AccessDenied is looked into once with a HEAD of the bucket,
    /// because S3 and R2 answer AccessDenied, not NoSuchBucket, when the token cannot list.
    /// A download's error (pull, cat, status --remote) says itself, but for the same refused
    /// endpoint: every command gives that one exit 3 and one line.
    package func diagnose(_ error: any Error, subject: String?) async -> Diagnosis {
        if Self.refusedConnection(error), !client.hasAnswered {
            // Refused before the server ever answered: every file would meet the same, so it is
            // the run's failure (exit 3, jobs stay queued), not one line per file.
            return Diagnosis(category: .configuration, message: Self.unreachable(error))
        }
        if let download = error as? DownloadError { return download.diagnosis }
        let diagnosis = Diagnosis(error, subject: subject)
        guard case .s3(.service(let failure))? = error as? UploadError, failure.code == "AccessDenied" else {
            return diagnosis
        }
        if case .service(let head)? = await client.headBucketFailure(bucket), head.status == 404 {
            return Diagnosis(
                category: .configuration,
                message: "the bucket '\(bucket)' does not exist (NoSuchBucket); check \(OptionName.bucket.sources)")
        }
        return diagnosis
    }

    /// Whether the connection was refused: an upload's, a download's or a request's error.
    static func refusedConnection(_ error: any Error) -> Bool {
        if case .s3(_, let inner)? = error as? DownloadError { return inner.failureKind == .connectionRefused }
        return FailureKind(error) == .connectionRefused
    }

    /// A refused connection before any reply: the endpoint, not a file, is what is wrong.
    static func unreachable(_ error: any Error) -> String {
        var detail = String(describing: error)
        if case .s3(.transfer(let failure))? = error as? UploadError { detail = failure.message }
        if case .transfer(let failure)? = error as? S3ClientError { detail = failure.message }
        if case .s3(_, .transfer(let failure))? = error as? DownloadError { detail = failure.message }
        return "the endpoint refused the connection (\(detail)): is the server running? check \(OptionName.endpoint.sources)"
    }
}
