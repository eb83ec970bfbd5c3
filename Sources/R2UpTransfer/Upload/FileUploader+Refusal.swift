import R2UpModel

/// What a conditional write meets at its key: a HEAD to look, and a 412 read as what it is (this
/// upload's own object, one that cannot be looked at, or another's).
extension FileUploader {
    /// `unknown`: the HEAD was refused (a write-only token) or, `unreachable`, every try of it
    /// failed on the way (a cut connection, a restarting server).
    enum Presence { case found(ObjectInfo), missing, unknown(unreachable: Bool) }

    /// HEAD of the key; `unknown` when it cannot tell (a write-only token, a HEAD that fails):
    /// then the write itself carries the condition, and its answer says what is wrong.
    /// `slotted: false` for a HEAD made inside a write's slot (after its 412): a second slot
    /// could wait forever at a depth of 1.
    func head(bucket: String, key: String, slotted: Bool = true) async -> Presence {
        do {
            // In a slot: a burst of HEADs (the first files, before a reply names the server) is
            // requests in flight like any other, and a 503 on one is throttling the depth must see.
            let info = try await withRetries("HEAD \(key)") { () throws(UploadError) -> ObjectInfo? in
                let request = { () async throws(UploadError) -> ObjectInfo? in
                    do { return try await self.client.headObject(bucket: bucket, key: key) } catch { throw .s3(S3ClientError(error)) }
                }
                return slotted ? try await slots.withTypedSlot(timed: false, request) : try await request()
            }
            return info.map(Presence.found) ?? .missing
        } catch {
            return .unknown(unreachable: error.failureKind.retryClass == .retryable)
        }
    }

    /// A write refused by its condition (412). The object there may be this upload's own, stored
    /// by a try whose reply was lost: `own` adopts it. When the key cannot be looked at for the
    /// network, that is unknown, not another's object (the next try of a daemon looks again).
    func refusal<T: Sendable>(
        _ failure: S3ClientError, bucket: String, key: String, condition: WriteCondition?,
        own: ((ObjectInfo) async -> T?)?
    ) async throws(UploadError) -> T {
        guard condition != nil, case .service(let refused) = failure, refused.status == 412 else {
            throw Self.conflict(failure, key: key, condition: condition)
        }
        switch await head(bucket: bucket, key: key, slotted: false) {
        case .found(let info):
            if let adopted = await own?(info) { return adopted }
        case .unknown(unreachable: true):
            throw .unconfirmed(
                key: key, reason: "a retry was refused (412 PreconditionFailed) and the object at the key, maybe this upload's own, could not be looked at")
        case .missing, .unknown:
            break
        }
        throw Self.conflict(failure, key: key, condition: condition)
    }

    /// A 412 PreconditionFailed: the condition failed, the object is not replaced.
    static func conflict(_ error: S3ClientError, key: String, condition: WriteCondition?) -> UploadError {
        guard case .service(let failure) = error, failure.status == 412, let condition else { return .s3(error) }
        switch condition {
        case .absent:
            return .keyConflict(key: key, reason: "already holds an object (412 PreconditionFailed)")
        case .etag(let etag):
            return .keyConflict(
                key: key, reason: "no longer holds ETag \(etag) that r2up wrote: it changed behind r2up's back (412 PreconditionFailed)")
        }
    }
}
