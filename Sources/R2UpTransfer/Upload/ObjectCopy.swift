import Foundation
public import R2UpModel

extension FileUploader {
    /// Makes `key` a server-side copy of `source` (a moved track's old object): no byte of the
    /// file is sent. CopyObject up to `copyThreshold`, above it UploadPartCopy in equal parts.
    /// The key is guarded like an upload's (`condition`), and the new object is checked with a
    /// HEAD: the size recorded for the track, the ETag the copy answered, and, where the
    /// source's ETag is a plain MD5, that same MD5 (the source did not change behind r2up).
    /// - Parameters:
    ///   - size: the size of the object at `source`, as the store recorded it.
    ///   - sourceETag: the ETag the store recorded for `source`.
    ///   - attributes: the new object's attributes, sent only by a multipart copy (CopyObject
    ///     keeps the source's).
    public func copy(
        from source: CopySource, sourceETag: String?, size: Int64, to key: String, bucket: String,
        attributes: ObjectAttributes, journal: (any UploadJournal)? = nil, condition: WriteCondition? = nil
    ) async throws(UploadError) -> UploadOutcome {
        let key = try ObjectKey.validatedForWriting(key)
        let multipart = size > settings.copyThreshold
        let etag: String
        if multipart {
            etag = try await conditioned(condition, bucket: bucket, key: key, multipart: true) {
                (condition) throws(UploadError) -> String in
                try await copyInParts(from: source, size: size, to: key, bucket: bucket, attributes: attributes, condition: condition)
            }
        } else {
            // An object at a key that must be empty is an earlier try's copy whose reply was lost (a
            // retry, Ctrl-C, kill -9) when it has the source's size and ETag, or the source's size
            // when this job sent a copy there before (a multipart source's copy may get another
            // ETag): nothing is copied again. Never another track's upload, though it held the
            // same bytes; never on the refusal of the first copy sent (the key held it before).
            let mayAdopt = journal?.mayAdoptObjectAtKey ?? true
            let own = { (sentBefore: Bool) -> ((ObjectInfo) async -> PutReply?)? in
                guard mayAdopt else { return nil }
                return { info in
                    Self.isCopy(info, size: size, sourceETag: sourceETag) || (info.size == size && sentBefore)
                        ? PutReply(etag: info.etag, server: nil) : nil
                }
            }
            let reply = try await conditioned(
                condition, bucket: bucket, key: key, multipart: false, copy: true, adopting: own(journal?.copyWasSent == true)
            ) { (condition) throws(UploadError) -> PutReply in
                try await withRetries("COPY \(key)") { () throws(UploadError) -> PutReply in
                    try await slots.withTypedSlot { () throws(UploadError) -> PutReply in
                        let sentBefore = journal?.copyWasSent == true
                        do {
                            if condition == .absent { journal?.copySent() }
                            return try await client.copyObject(bucket: bucket, key: key, source: source, condition: condition)
                        } catch {
                            // The condition refused the copy: the object there may be an earlier try's copy.
                            do throws(UploadError) {
                                return try await refusal(
                                    S3ClientError(error), bucket: bucket, key: key, condition: condition, own: own(sentBefore))
                            } catch .keyConflict(let conflictKey, let reason) where !sentBefore {
                                // Refused at the first copy sent: the key held another object already.
                                journal?.copyRefused()
                                throw .keyConflict(key: conflictKey, reason: reason)
                            }
                        }
                    }
                }
            }
            let profile = ServerProfile.identify(endpoint: client.endpoint, serverHeader: reply.server)
            if reply.server != nil || profile != .unknown { self.profile.learn(profile) }
            etag = reply.etag
            // A plain copy keeps the content's MD5: another ETag means the source is not what r2up uploaded.
            if let sourceETag, Self.isHexMD5(sourceETag), Self.isHexMD5(etag), etag.lowercased() != sourceETag.lowercased() {
                throw .verificationFailed(
                    key: key, reason: "the copy's ETag is \(etag), the object at '\(source.key)' that r2up uploaded had \(sourceETag)")
            }
        }
        do { try await journal?.bodySent(etag: etag) } catch { throw .store(error) }
        try await verify(bucket: bucket, key: key, size: size, etag: etag)
        return UploadOutcome(
            bucket: bucket, key: key, etag: etag, size: size, bytesSent: 0,
            partCount: multipart ? ((try? CopyPartPlan(size: size, preferredPartSize: settings.copyPartSize))?.partCount ?? 1) : 1,
            multipart: multipart)
    }

    /// Whether the object is a copy of the source as recorded: its size and ETag (a plain MD5,
    /// or a multipart ETag that the server's copy kept).
    private static func isCopy(_ info: ObjectInfo, size: Int64, sourceETag: String?) -> Bool {
        guard let sourceETag, !sourceETag.isEmpty else { return false }
        return info.size == size && info.etag.lowercased() == sourceETag.lowercased()
    }

    /// Create, UploadPartCopy of each range, complete; a failure aborts the upload (a copy has
    /// no bytes of the file to lose: the next try starts over).
    private func copyInParts(
        from source: CopySource, size: Int64, to key: String, bucket: String, attributes: ObjectAttributes,
        condition: WriteCondition?
    ) async throws(UploadError) -> String {
        let plan = try CopyPartPlan(size: size, preferredPartSize: settings.copyPartSize)
        let uploadID = try await createMultipartUpload(
            bucket: bucket, key: key, attributes: attributes, check: .md5, label: "CREATE \(key)")
        do throws(UploadError) {
            var parts: [UploadedPart] = []
            for number in 1...plan.partCount {
                let range = plan.range(ofPart: number)
                let etag = try await withRetries("COPY PART \(number) \(key)") { () throws(UploadError) -> String in
                    try await slots.withTypedSlot { () throws(UploadError) -> String in
                        do {
                            return try await client.uploadPartCopy(
                                bucket: bucket, key: key, uploadID: uploadID, partNumber: number, source: source, range: range)
                        } catch { throw .s3(S3ClientError(error)) }
                    }
                }
                parts.append(UploadedPart(partNumber: number, etag: etag, size: Int64(range.count)))
            }
            return try await withRetries("COMPLETE \(key)") { () throws(UploadError) -> String in
                do {
                    return try await client.completeMultipartUpload(
                        bucket: bucket, key: key, uploadID: uploadID, parts: parts, condition: condition)
                } catch {
                    throw Self.conflict(S3ClientError(error), key: key, condition: condition)
                }
            }
        } catch {
            try? await client.abortMultipartUpload(bucket: bucket, key: key, uploadID: uploadID)
            throw error
        }
    }
}
