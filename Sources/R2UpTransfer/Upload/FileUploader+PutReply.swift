import Foundation
import R2UpModel

/// What a single PUT's reply comes to. Out of line (`@inline(never)`): the frames of `putWhole`
/// and `putOnce` stay allocated while a small file's request is in flight, hundreds at once.
extension FileUploader {
    /// What the PUT's reply comes to: the outcome, or nil when the stored object does not match
    /// (after a second HEAD) and is uploaded once more (`lastTry`: not again, the job fails).
    @inline(never)
    func accepted(
        _ reply: PutReply, file: LocalFile, bucket: String, key: String, hashed: PayloadChecksum?, sent: ByteCounter,
        journal: (any UploadJournal)?, lastTry: Bool
    ) async throws(UploadError) -> UploadOutcome? {
        // An object found at the key as an earlier try's upload: no PUT went out, hash it now.
        let checksum = if let hashed { hashed } else { try check.checksum(of: file, offset: 0, length: file.size) }
        let etag = reply.etag
        let profile = ServerProfile.identify(endpoint: client.endpoint, serverHeader: reply.server)
        if reply.server != nil || profile != .unknown { self.profile.learn(profile) }
        do throws(UploadError) {
            // Where a single-PUT ETag is the hex MD5 of the stored bytes, it must match the MD5 r2up sent.
            if profile.singlePutETagIsMD5, case .md5(let sentMD5) = checksum, let md5 = Self.hex(base64: sentMD5),
                Self.isHexMD5(etag), etag.lowercased() != md5
            {
                throw .verificationFailed(key: key, reason: "its ETag is \(etag), the MD5 of the bytes sent is \(md5)")
            }
            do { try await journal?.bodySent(etag: etag) } catch { throw .store(error) }
            if settings.headAfterPut ?? !profile.verifies(checksum.check) {
                try await verify(bucket: bucket, key: key, size: file.size, etag: etag)
            }
        } catch .verificationFailed where !lastTry {
            return nil
        }
        return UploadOutcome(
            bucket: bucket, key: key, etag: etag, size: file.size, bytesSent: sent.value, partCount: 1,
            multipart: false, digest: ContentDigest.whole(checksum))
    }

    /// The PUT's reply, once the file is known not to have moved since it was hashed.
    @inline(never)
    func unmoved(
        _ file: LocalFile, reply: PutReply, bucket: String, key: String, hashed: PayloadChecksum?, condition: WriteCondition?
    ) async throws(UploadError) -> PutReply {
        // The bytes were hashed before sending; the file moved on since (edited, deleted, moved).
        guard file.isUnchanged() else {
            // Over an object the key held (the track's earlier upload, or --overwrite), withdrawing
            // this one would lose that too. Where the server checked the body against the hash, it
            // stored the file as it was read, whole: a version, not a torn object, and it stands.
            // The track then shows the file changed since upload, or gone (cloud only).
            if !reply.adopted, condition != .absent, let checksum = hashed,
                Self.storedAsHashed(reply, checksum: checksum, endpoint: client.endpoint)
            {
                return reply
            }
            // A key that was empty is left empty: the file goes up whole on the next run. Elsewhere
            // what was stored may be torn. An object an earlier try stored is left as it is: this
            // run did not write it.
            if !reply.adopted { try? await deleteQuietly(bucket: bucket, key: key) }
            throw file.changeError
        }
        return reply
    }

    func deleteQuietly(bucket: String, key: String) async throws(UploadError) {
        do { try await client.deleteObject(bucket: bucket, key: key) } catch { throw .s3(S3ClientError(error)) }
    }
}
