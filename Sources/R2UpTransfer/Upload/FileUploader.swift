import Foundation
import SigV4
import Synchronization
public import R2UpModel

/// Settings for moving one file's bytes.
public struct UploadSettings: Sendable, Equatable {
    /// Files up to this size go in one PUT (R2 bills a multipart upload at least three Class A operations).
    public var multipartThreshold: Int64 = 8 << 20
    public var partSize: Int64 = 8 << 20
    /// Attempts per request inside this run before the failure is handed back.
    public var maxAttempts = 5
    /// Leave a failed multipart upload on the server: the caller (the upload queue, whose job
    /// state machine decides) resumes or aborts it. Off, a failure aborts it at once.
    public var keepPartsOnFailure = false
    /// The checksum each PUT and part carries; nil picks the endpoint's default (`IntegrityCheck.defaultCheck`).
    public var integrityCheck: IntegrityCheck?
    /// HEAD a single-PUT object after upload: true always, false never, nil (the default) only
    /// when the server is not known to verify the checksum the PUT carried (`ServerProfile`).
    /// Without the HEAD the server-verified checksum, the 2xx reply and its ETag (equal to the
    /// MD5 when one was sent) are the proof, saving a request per file.
    /// A multipart upload is always checked with a HEAD: its completion can fail inside a 200.
    public var headAfterPut: Bool?
    /// Server-side copies (a moved track) above this size go as UploadPartCopy in equal parts:
    /// S3 and R2 refuse a CopyObject of more than 5 GiB.
    public var copyThreshold: Int64 = 5 << 30
    /// The part size of such a copy (raised when 10,000 parts would not cover the object).
    public var copyPartSize: Int64 = 512 << 20

    public init() {}
}

/// What a finished upload left in the bucket.
public struct UploadOutcome: Sendable, Equatable {
    public var bucket: String
    public var key: String
    public var etag: String
    public var size: Int64
    /// Bytes put on the wire in this run, retries included.
    public var bytesSent: Int64
    public var partCount: Int
    public var multipart: Bool
    /// The content digest of what was stored (`ContentDigest`), when its checksums are known.
    public var digest: String? = nil
}

/// Uploads one file: a single PUT or a multipart upload, each request carrying
/// a checksum the server verifies (`ServerProfile`); a HEAD checks the result where it does not.
public struct FileUploader: Sendable {
    public let client: S3Client
    public let settings: UploadSettings
    public let slots: TransferSlots
    public let retry: RequestRetryPolicy
    /// Which server answered, learnt from the first reply's `Server` header and shared by copies.
    public let profile: ServerProfileCache

    /// The checksum requests carry: the configured one, else the endpoint's default, by the
    /// server once a reply said which it is (read when an upload's first request goes out).
    var check: IntegrityCheck {
        if let configured = settings.integrityCheck { return configured }
        let known = profile.value ?? client.server.map { ServerProfile.identify(endpoint: client.endpoint, serverHeader: $0) }
        return IntegrityCheck.defaultCheck(for: client.endpoint, profile: known)
    }

    public init(
        client: S3Client, settings: UploadSettings, slots: TransferSlots, retry: RequestRetryPolicy = RequestRetryPolicy(),
        profile: ServerProfileCache = ServerProfileCache()
    ) {
        self.client = client
        self.settings = settings
        self.slots = slots
        self.retry = retry
        self.profile = profile
    }

    /// Sizes the run's adaptive depth to a file's requests (the whole file, or a part of a big
    /// one) before its first request goes out (`TransferSlots.prepare`).
    public func prepareDepth(forFileOfSize size: Int64) {
        slots.prepare(bytes: size <= settings.multipartThreshold ? size : settings.partSize)
    }

    /// Uploads `file` to `bucket`/`key`. `checkpoint` resumes an earlier multipart upload.
    /// `condition` is what the key must hold for the write to replace it (nil: anything).
    public func upload(
        _ file: LocalFile, bucket: String, key: String, attributes: ObjectAttributes,
        checkpoint: MultipartCheckpoint? = nil, journal: (any UploadJournal)? = nil, condition: WriteCondition? = nil
    ) async throws(UploadError) -> UploadOutcome {
        let key = try ObjectKey.validatedForWriting(key)
        if file.size <= settings.multipartThreshold && checkpoint == nil {
            return try await putWhole(
                file, bucket: bucket, key: key, attributes: attributes, journal: journal, condition: condition)
        }
        return try await putParts(
            file, bucket: bucket, key: key, attributes: attributes, checkpoint: checkpoint, journal: journal, condition: condition)
    }

    /// A multipart upload. Out of line, as every step around a single PUT: the frames of the
    /// functions a small file's request waits in stay allocated for as long as it is in flight.
    @inline(never)
    private func putParts(
        _ file: LocalFile, bucket: String, key: String, attributes: ObjectAttributes, checkpoint: MultipartCheckpoint?,
        journal: (any UploadJournal)?, condition: WriteCondition?
    ) async throws(UploadError) -> UploadOutcome {
        // One check for every part of an upload: a resumed one keeps the check its parts carry.
        let resumed = settings.integrityCheck == nil ? checkpoint?.parts.first?.checksum?.check : nil
        return try await MultipartUpload(
            uploader: self, file: file, bucket: bucket, key: key, attributes: attributes, journal: journal,
            condition: condition, check: resumed ?? check
        ).run(checkpoint: checkpoint)
    }

    /// Sends `write` with `condition`. Where the server is not known to honour it on this
    /// request (or the condition cannot be a header), a HEAD checks it first. The track's own
    /// object deleted behind r2up's back (an `If-Match` that finds nothing) is written again
    /// with `If-None-Match: *`: restoring it replaces nothing.
    /// - Parameters:
    ///   - adopting: for a key that must be empty, what an object the HEAD finds there stands
    ///     for when it is an earlier try's write whose reply was lost (nil: a conflict).
    ///   - replacing: whether an object found at the key is this job's own earlier write (a copy
    ///     or a PUT whose reply was lost), made before the file changed: it is replaced (`If-Match`
    ///     its ETag).
    func conditioned<T: Sendable>(
        _ condition: WriteCondition?, bucket: String, key: String, multipart: Bool, copy: Bool = false,
        adopting: ((ObjectInfo) async -> T?)? = nil, replacing: ((ObjectInfo) -> Bool)? = nil,
        _ write: (WriteCondition?) async throws(UploadError) -> T
    ) async throws(UploadError) -> T {
        try await conditioned(
            condition, bucket: bucket, key: key, multipart: multipart, copy: copy, holdingBody: false, adopting: adopting,
            replacing: replacing
        ) { (condition, _) throws(UploadError) -> T in try await write(condition) }
    }

    /// `conditioned` for a write whose body can be held (`BodyGate`): while the reply that names
    /// the server is on its way, the write goes at once with its body held, and the body follows
    /// once the name says the server honours the condition. Where it does not, the body never
    /// goes (the request stores nothing) and the write is sent again the way that server needs.
    func conditioned<T: Sendable>(
        _ condition: WriteCondition?, bucket: String, key: String, multipart: Bool, copy: Bool = false,
        holdingBody: Bool, adopting: ((ObjectInfo) async -> T?)? = nil, replacing: ((ObjectInfo) -> Bool)? = nil,
        _ write: (WriteCondition?, BodyGate?) async throws(UploadError) -> T
    ) async throws(UploadError) -> T {
        guard let condition else { return try await write(nil, nil) }
        var probed: Presence?
        var gate: BodyGate?
        var decision: Task<Void, Never>?
        if knownServer == .unknown, profile.value == nil, client.server == nil {
            if holdingBody, condition.header != nil, profile.isNaming {
                // The run's HEAD of the bucket is under way: send now, the body held until its reply.
                (gate, decision) = holdBody(condition, multipart: multipart)
            } else {
                // The first request of a run to an unnamed server is a HEAD sent alone (`nameServer`),
                // or the run's HEAD of the bucket already under way (`nameServerAhead`): wait for it.
                probed = await profile.nameServer { await head(bucket: bucket, key: key) }
            }
        }
        let known = knownServer
        let honoured = copy ? known.honoursOnCopy(condition) : known.honours(condition, multipart: multipart)
        if gate == nil, condition.header == nil || !honoured {
            let presence = if let probed { probed } else { await head(bucket: bucket, key: key) }
            switch presence {
            case .unknown:
                break  // HEAD not allowed: the write itself carries the condition and says what is wrong
            case .missing:
                return try await write(.absent, nil)
            case .found(let info):
                switch condition {
                case .absent:
                    if let adopted = await adopting?(info) { return adopted }
                    if replacing?(info) == true, !info.etag.isEmpty { return try await write(.etag(info.etag), nil) }
                    throw .keyConflict(key: key, reason: "already holds an object (ETag \(info.etag))")
                case .etag(let etag) where info.etag != etag:
                    if replacing?(info) == true, !info.etag.isEmpty { return try await write(.etag(info.etag), nil) }
                    throw .keyConflict(
                        key: key, reason: "holds ETag \(info.etag), not \(etag) that r2up wrote: it changed behind r2up's back")
                case .etag:
                    break
                }
            }
        }
        do {
            let written = try await write(condition, gate)
            await decision?.value
            return written
        } catch .s3(.transfer(let failure)) where failure.kind == .bodyWithheld {
            // The server turned out not to honour the condition: nothing was stored; the write
            // goes again the way that server needs (a HEAD first).
            await decision?.value
            return try await conditioned(
                condition, bucket: bucket, key: key, multipart: multipart, copy: copy, holdingBody: false, adopting: adopting,
                replacing: replacing, write)
        } catch .keyConflict(let conflictKey, let reason) {
            switch condition {
            case .etag:
                switch await head(bucket: bucket, key: key) {
                case .missing:
                    return try await write(.absent, nil)
                case .found(let info) where replacing?(info) == true && !info.etag.isEmpty:
                    return try await write(.etag(info.etag), nil)
                default:
                    break
                }
            case .absent:
                // Looked at again: the write's own HEAD after its 412 may have met a bad reply
                // (a 404 or 400 for the object an earlier try stored) and not taken it.
                if adopting != nil || replacing != nil, case .found(let info) = await head(bucket: bucket, key: key) {
                    if let adopted = await adopting?(info) { return adopted }
                    if replacing?(info) == true, !info.etag.isEmpty { return try await write(.etag(info.etag), nil) }
                }
            }
            throw .keyConflict(key: conflictKey, reason: reason)
        }
    }

    /// A gate for a write's body and the task that decides it once the server is named: released
    /// where the server honours `condition`, refused (the body never goes) where it does not.
    private func holdBody(_ condition: WriteCondition, multipart: Bool) -> (BodyGate, Task<Void, Never>) {
        let gate = BodyGate(engine: client.engine)
        let decision = Task { [self] in
            await profile.waitForName()
            if knownServer.honours(condition, multipart: multipart) { gate.release() } else { gate.refuse() }
        }
        return (gate, decision)
    }

    /// The server as far as the endpoint and the replies so far name it (any reply's `Server`
    /// header: a HEAD's names it as well as a PUT's).
    var knownServer: ServerProfile {
        profile.value ?? ServerProfile.identify(endpoint: client.endpoint, serverHeader: client.server)
    }

    /// Whether the object is this file as it is (size and MD5 ETag): what an earlier attempt
    /// whose reply was lost stored.
    private static func isOwnObject(_ info: ObjectInfo, _ file: LocalFile) -> Bool {
        guard info.size == file.size, Self.isHexMD5(info.etag), let md5 = try? file.md5Base64(offset: 0, length: file.size)
        else { return false }
        return Self.etag(info.etag, isMD5: md5)
    }

    private func putWhole(
        _ file: LocalFile, bucket: String, key: String, attributes: ObjectAttributes, journal: (any UploadJournal)?,
        condition: WriteCondition?
    ) async throws(UploadError) -> UploadOutcome {
        // Hashed when the first PUT goes out: after the HEAD an unknown server gets first, whose
        // reply says which checksum it verifies (`check`).
        var hashed: PayloadChecksum?
        let sent = ByteCounter()
        var retrying = false
        // A stored object that does not match (after a second HEAD) is uploaded once more before the job fails.
        var uploads = 0
        var condition = condition
        while true {
            uploads += 1
            let reply = try await putOnce(
                file, bucket: bucket, key: key, attributes: attributes, checksum: &hashed, sent: sent, retrying: &retrying,
                journal: journal, condition: condition)
            // Sent again below, the key holds what this PUT stored: that is what must be replaced.
            if condition != nil, !reply.etag.isEmpty { condition = .etag(reply.etag) }
            if let outcome = try await accepted(
                reply, file: file, bucket: bucket, key: key, hashed: hashed, sent: sent, journal: journal, lastTry: uploads >= 2)
            {
                return outcome
            }
        }
    }

    /// One PUT of the whole file, with request retries; the file must not have moved since it was hashed.
    private func putOnce(
        _ file: LocalFile, bucket: String, key: String, attributes: ObjectAttributes, checksum hashed: inout PayloadChecksum?,
        sent: ByteCounter, retrying: inout Bool, journal: (any UploadJournal)?, condition: WriteCondition?
    ) async throws(UploadError) -> PutReply {
        // An object with this file's size and MD5 at a key that must be empty is an earlier try's
        // PUT whose reply was lost (a retry, Ctrl-C or kill -9 before its record): nothing is sent
        // again. Never another track's upload, though it held the same bytes.
        let own: ((ObjectInfo) async -> PutReply?)? =
            journal?.mayAdoptObjectAtKey ?? true
            ? { info in Self.isOwnObject(info, file) ? PutReply(etag: info.etag, server: nil, adopted: true) : nil } : nil
        let reply = try await conditioned(
            condition, bucket: bucket, key: key, multipart: false, holdingBody: true, adopting: own,
            replacing: journal.map { j in { j.isOwnEarlierWrite($0) } }
        ) {
            (condition, gate) throws(UploadError) -> PutReply in
            try await withRetries("PUT \(key)") { () throws(UploadError) -> PutReply in
            let checksum = try ready(file, retrying: &retrying, hashed: &hashed)
            let body = RequestBody.file(FileSlice(descriptor: file.descriptor, offset: 0, length: file.size))
            return try await slots.withTypedSlot(bytes: file.size) { () throws(UploadError) -> PutReply in
                do {
                    let reply = try await client.putObjectReply(
                        bucket: bucket, key: key, body: body, checksum: checksum, attributes: attributes,
                        condition: condition, heldBy: gate, onProgress: { journal?.progress(bytesSent: $0) })
                    sent.add(file.size)
                    return reply
                } catch {
                    let failure = S3ClientError(error)
                    // No reply: the server may have stored it. Noted, so a later upload of the
                    // changed file knows that object for its own (a 412 did not store anything).
                    if condition != nil, [.connectionReset, .timeout].contains(failure.failureKind) {
                        let md5 = if case .md5(let base64) = checksum { Self.hex(base64: base64) } else { String?.none }
                        journal?.putSent(size: file.size, etag: md5)
                    }
                    return try await refused(failure, bucket: bucket, key: key, condition: condition, sent: sent, size: file.size, own: own)
                }
            }
            }
        }
        return try await unmoved(file, reply: reply, bucket: bucket, key: key, hashed: hashed, condition: condition)
    }

    /// The file checked and hashed for a PUT: opened and hashed a moment ago, the first; a retry
    /// comes later, when the file may have moved.
    @inline(never)
    private func ready(_ file: LocalFile, retrying: inout Bool, hashed: inout PayloadChecksum?) throws(UploadError) -> PayloadChecksum {
        if retrying { guard file.isUnchanged() else { throw file.changeError } }
        retrying = true
        let checksum = if let hashed { hashed } else { try check.checksum(of: file, offset: 0, length: file.size) }
        hashed = checksum
        return checksum
    }

    /// A PUT that failed. Where the condition refused the write, the object there may be this
    /// file's, stored by an attempt whose reply was lost: adopted. The HEAD is retried like any request.
    @inline(never)
    private func refused(
        _ failure: S3ClientError, bucket: String, key: String, condition: WriteCondition?, sent: ByteCounter, size: Int64,
        own: ((ObjectInfo) async -> PutReply?)?
    ) async throws(UploadError) -> PutReply {
        let adopted = try await refusal(failure, bucket: bucket, key: key, condition: condition, own: own)
        sent.add(size)
        return adopted
    }

    /// Runs `operation`, retrying retryable failures with backoff and full jitter.
    func withRetries<T: Sendable>(
        _ what: String, _ operation: () async throws(UploadError) -> T
    ) async throws(UploadError) -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await operation()
            } catch {
                guard let delay = retryDelay(after: error, attempt: attempt) else { throw error }
                try? await Task.sleep(for: delay)
                if Task.isCancelled { throw error }
            }
        }
    }

    /// How long to wait before trying again, or nil when the failure is handed back.
    @inline(never)
    private func retryDelay(after error: UploadError, attempt: Int) -> Duration? {
        guard attempt < settings.maxAttempts else { return nil }
        return retry.delayBeforeRetry(error.failureKind, attempt: attempt)
    }
}
