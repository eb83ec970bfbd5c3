package import R2UpKit
public import R2UpModel
public import R2UpStore
public import R2UpTransfer

// One-call forms only tests take. The product goes through the batch and streaming forms
// these wrap (`Store.enqueue([…])`, `Intake.enqueue([…])`, `UploadQueue.run(…, admit:)`,
// `SyncScanner.scan(_:visit:)`, `SyncPlan.add`/`finish`, the S3 calls with a `checksum:`), so a
// test through them still runs the product's path.

extension S3Client {
    /// PutObject. `contentMD5` is the base64 MD5 of the body, which the server verifies.
    public func putObject(
        bucket: String, key: String, body: RequestBody, contentMD5: String?, attributes: ObjectAttributes = .init(),
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> String {
        try await putObject(
            bucket: bucket, key: key, body: body, checksum: contentMD5.map(PayloadChecksum.md5), attributes: attributes,
            onProgress: onProgress)
    }

    /// UploadPart with a base64 `Content-MD5` (or none); returns the part's ETag.
    public func uploadPart(
        bucket: String, key: String, uploadID: String, partNumber: Int, body: FileSlice, contentMD5: String?,
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) async throws(S3ClientError) -> String {
        try await uploadPart(
            bucket: bucket, key: key, uploadID: uploadID, partNumber: partNumber, body: body,
            checksum: contentMD5.map(PayloadChecksum.md5), onProgress: onProgress)
    }
}

extension Store {
    /// Queues one upload through the batch enqueue of push, sync and watch.
    @discardableResult
    public func enqueue(
        _ job: UploadJob, intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) throws(StoreError) -> EnqueueResult {
        try enqueue([job], intent: intent, replace: replace)[0]
    }
}

extension UploadService {
    /// Uploads one file now, without the queue.
    package func upload(_ request: PushRequest, journal: (any UploadJournal)? = nil) async throws(UploadError) -> UploadOutcome {
        let file = try LocalFile(path: request.path)
        return try await uploader.upload(file, bucket: bucket, key: request.key, attributes: request.attributes, journal: journal)
    }
}

extension UploadQueue {
    /// Runs jobs, admitting every one.
    package func run(
        _ jobs: [UploadJob], attributes: RunAttributes = RunAttributes(), progress: TransferProgress? = nil,
        onEvent: @escaping @Sendable (QueueEvent) -> Void = { _ in }
    ) async -> QueueRunSummary {
        await run(jobs, attributes: attributes, progress: progress, admit: { _ in true }, onEvent: onEvent)
    }
}

extension Intake {
    /// Checks one file and queues it, as the batch form does for each of many.
    package func enqueue(
        _ request: PushRequest, intent: EnqueueIntent = .asked, replace: ReplacePolicy = .guarded
    ) async throws -> EnqueueResult {
        try await enqueue([request], intent: intent, replace: replace)[0].get()
    }
}

extension SyncScanner {
    /// Regular files under `root` (an absolute, standardised folder path), and what was skipped.
    package func scan(_ root: String) -> (files: [ScannedFile], problems: [ScanProblem]) {
        var files: [ScannedFile] = []
        let problems = scan(root) { files.append($0) }
        return (files, problems)
    }
}

extension SyncPlan {
    /// The whole plan at once, from a scan and the store's tracks by path.
    package init(
        files: [ScannedFile], prefix: String, bucket: String, filter: SyncFilter, tracks: [String: SyncTrackState],
        remote: [String: ObjectSummary]?, minAgeNs: Int64, nowNs: Int64
    ) {
        self.init(prefix: prefix, bucket: bucket, filter: filter, remote: remote, minAgeNs: minAgeNs, nowNs: nowNs)
        for file in files { add(file, track: tracks[file.path]) }
        finish()
    }
}
