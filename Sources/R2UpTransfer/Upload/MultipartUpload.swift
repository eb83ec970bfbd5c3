import Foundation
import SigV4
import Synchronization
import R2UpModel

/// Drives one multipart upload: plan, create or resume, send the missing parts
/// concurrently, check the file did not change, complete, verify.
struct MultipartUpload: Sendable {
    let uploader: FileUploader
    let file: LocalFile
    let bucket: String
    let key: String
    let attributes: ObjectAttributes
    let journal: (any UploadJournal)?
    /// What the key must hold when the upload completes (nil: anything).
    let condition: WriteCondition?
    /// The checksum every part carries, chosen once for the upload.
    let check: IntegrityCheck

    private var client: S3Client { uploader.client }

    /// Whether this upload's parts go without a checksum header, checked against the reply's.
    private var partsEchoed: Bool {
        check == .crc32c && uploader.knownServer.echoesPartCRC32C && uploader.profile.partsEchoed
    }

    func run(checkpoint: MultipartCheckpoint?) async throws(UploadError) -> UploadOutcome {
        var plan: PartPlan
        var uploadID: String
        var done: [Int: UploadedPart] = [:]
        let resumption: Resumption = if let checkpoint { try await reconcile(checkpoint) } else { .restart }
        if case .finished(let outcome) = resumption { return outcome }
        if case .resume(let resumedPlan, let resumedID, let resumedParts) = resumption {
            (plan, uploadID, done) = (resumedPlan, resumedID, resumedParts)
        } else {
            plan = try PartPlan(fileSize: file.size, preferredPartSize: uploader.settings.partSize)
            uploadID = try await uploader.createMultipartUpload(
                bucket: bucket, key: key, attributes: attributes, check: check, label: "CreateMultipartUpload \(key)")
            do { try await journal?.multipartStarted(uploadID: uploadID, partSize: plan.partSize) } catch {
                // Unrecorded, no later run could resume or abort it: abort it now.
                await abort(uploadID)
                throw .store(error)
            }
        }
        let sent = ByteCounter()
        let alreadySent = done.values.reduce(Int64(0)) { $0 + $1.size }
        do {
            let fresh = try await sendParts(plan: plan, uploadID: uploadID, skipping: Set(done.keys), sent: sent, base: alreadySent)
            for part in fresh { done[part.partNumber] = part }
            // Never publish a torn object: the bytes sent must be the file as it is now.
            guard file.isUnchanged() else { throw file.changeError }
            let parts = (1...plan.partCount).compactMap { done[$0] }
            guard parts.count == plan.partCount, parts.reduce(Int64(0), { $0 + $1.size }) == file.size else {
                throw UploadError.verificationFailed(key: key, reason: "the parts do not add up to the file")
            }
            do { try await journal?.bodySent(etag: nil) } catch { throw UploadError.store(error) }
            // An earlier try's completion of these parts is taken, and this upload aborted.
            let taken = Taken()
            let own = adoption(of: parts, taken: taken)
            let etag = try await uploader.conditioned(
                condition, bucket: bucket, key: key, multipart: true, adopting: own,
                replacing: journal.map { j in { j.isOwnEarlierWrite($0) } }
            ) {
                (condition) throws(UploadError) -> String in
                try await uploader.withRetries("CompleteMultipartUpload \(key)") { () throws(UploadError) -> String in
                    do {
                        return try await client.completeMultipartUpload(
                            bucket: bucket, key: key, uploadID: uploadID, parts: parts, condition: condition)
                    } catch {
                        // An attempt before completed it and its reply was lost: the object carries
                        // these parts' multipart ETag.
                        return try await uploader.refusal(
                            S3ClientError(error), bucket: bucket, key: key, condition: condition, own: own)
                    }
                }
            }
            if taken.flag.load(ordering: .relaxed) { await abort(uploadID) }
            try await uploader.verify(bucket: bucket, key: key, size: file.size, etag: nil)
            return UploadOutcome(
                bucket: bucket, key: key, etag: etag, size: file.size, bytesSent: sent.value,
                partCount: plan.partCount, multipart: true,
                digest: ContentDigest.parts(parts, partSize: plan.partSize))
        } catch let error as UploadError {
            if !uploader.settings.keepPartsOnFailure { await abort(uploadID) }
            throw error
        } catch {
            if !uploader.settings.keepPartsOnFailure { await abort(uploadID) }
            throw .s3(.transfer(TransferError(kind: .cancelled, message: "cancelled")))
        }
    }

    /// An object at the key made of these very parts (its multipart ETag says so) is an earlier
    /// try's completion whose confirmation was lost: it is taken (`taken` set), never replaced.
    private func adoption(of parts: [UploadedPart], taken: Taken) -> ((ObjectInfo) async -> String?)? {
        guard journal?.mayAdoptObjectAtKey ?? true, let expected = Self.multipartETag(parts.map(\.etag)) else { return nil }
        let size = file.size
        return { info in
            guard info.etag == expected, info.size == size else { return nil }
            taken.flag.store(true, ordering: .relaxed)
            return info.etag
        }
    }

    /// What an earlier run left: parts to build on, nothing usable, or an object it finished.
    private enum Resumption {
        case resume(PartPlan, uploadID: String, parts: [Int: UploadedPart])
        case restart
        case finished(UploadOutcome)
    }

    /// Checks an earlier run's parts against the server.
    private func reconcile(_ checkpoint: MultipartCheckpoint) async throws(UploadError) -> Resumption {
        guard let plan = try? PartPlan(fileSize: file.size, fixedPartSize: checkpoint.partSize) else {
            await abort(checkpoint.uploadID)
            return .restart
        }
        let onServer: [UploadedPart]
        do {
            onServer = try await client.listParts(bucket: bucket, key: key, uploadID: checkpoint.uploadID)
        } catch .service(let failure) where failure.code == "NoSuchUpload" || failure.status == 404 {
            // Gone: expired, aborted — or completed by a run that died before recording it.
            if let outcome = await completedEarlier(checkpoint, plan: plan) { return .finished(outcome) }
            return .restart
        } catch {
            throw .s3(S3ClientError(error))
        }
        // Parts sent with another kind of checksum (the setting changed) cannot be completed
        // consistently: start over.
        guard checkpoint.parts.allSatisfy({ $0.checksum?.check == check }) else {
            await abort(checkpoint.uploadID)
            return .restart
        }
        let serverParts = Dictionary(onServer.map { ($0.partNumber, $0) }, uniquingKeysWith: { a, _ in a })
        var done: [Int: UploadedPart] = [:]
        for part in checkpoint.parts {
            // Keep a part only when the server has it with the same ETag and the size the plan expects.
            guard part.partNumber >= 1, part.partNumber <= plan.partCount,
                let remote = serverParts[part.partNumber], remote.etag == part.etag,
                remote.size == plan.range(ofPart: part.partNumber).length
            else { continue }
            done[part.partNumber] = part
        }
        return .resume(plan, uploadID: checkpoint.uploadID, parts: done)
    }

    /// The object an earlier run completed but did not live to record, recognised by its
    /// multipart ETag (MD5 of the parts' MD5s, "-N") computed from every recorded part.
    private func completedEarlier(_ checkpoint: MultipartCheckpoint, plan: PartPlan) async -> UploadOutcome? {
        let parts = checkpoint.parts.sorted { $0.partNumber < $1.partNumber }
        guard parts.count == plan.partCount, parts.map(\.partNumber) == Array(1...plan.partCount),
            file.isUnchanged(),
            let expected = Self.multipartETag(parts.map(\.etag)),
            let info = try? await client.headObject(bucket: bucket, key: key),
            info.size == file.size, info.etag == expected
        else { return nil }
        return UploadOutcome(
            bucket: bucket, key: key, etag: info.etag, size: file.size, bytesSent: 0, partCount: plan.partCount,
            multipart: true)
    }

    /// S3's ETag of a completed multipart object, from its parts' hex MD5 ETags.
    static func multipartETag(_ partETags: [String]) -> String? {
        var digests: [UInt8] = []
        for etag in partETags {
            guard let bytes = Self.hexBytes(etag), bytes.count == 16 else { return nil }
            digests += bytes
        }
        let hex = Digest.md5(digests).map { String(format: "%02x", $0) }.joined()
        return "\(hex)-\(partETags.count)"
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }

    private func sendParts(
        plan: PartPlan, uploadID: String, skipping: Set<Int>, sent: ByteCounter, base: Int64
    ) async throws -> [UploadedPart] {
        let journal = journal
        let inFlight = ProgressTally(base: base)
        return try await withThrowingTaskGroup(of: UploadedPart.self) { group in
            var results: [UploadedPart] = []
            var next = 1
            var running = 0
            // Keep at most the slot limit of part tasks alive (read as the depth moves), so
            // memory stays flat for huge files.
            let slots = uploader.slots
            @discardableResult func addNext() -> Bool {
                while next <= plan.partCount && skipping.contains(next) { next += 1 }
                guard next <= plan.partCount else { return false }
                let number = next
                next += 1
                running += 1
                group.addTask {
                    try await sendPart(number, plan: plan, uploadID: uploadID, sent: sent, tally: inFlight)
                }
                return true
            }
            while running < slots.limit + 1, addNext() {}
            while let part = try await group.next() {
                running -= 1
                results.append(part)
                while running < slots.limit + 1, addNext() {}
            }
            _ = journal
            return results
        }
    }

    private func sendPart(
        _ number: Int, plan: PartPlan, uploadID: String, sent: ByteCounter, tally: ProgressTally
    ) async throws(UploadError) -> UploadedPart {
        let (offset, length) = plan.range(ofPart: number)
        // A server that answers with the part's CRC-32C gets it computed as the part is sent, so
        // the file is read once; elsewhere the checksum goes in a header, read once before the part.
        let ahead = partsEchoed ? nil : try check.checksum(of: file, offset: offset, length: length)
        let journal = journal
        typealias Reply = (etag: String, checksum: PayloadChecksum)
        let (etag, checksum) = try await uploader.withRetries("UploadPart \(number) of \(key)") { () throws(UploadError) -> Reply in
            guard file.isUnchanged() else { throw file.changeError }
            // After a reply without its CRC-32C the part goes again with the header, read now.
            let header: PayloadChecksum?
            if let ahead { header = ahead } else if partsEchoed { header = nil } else {
                header = try check.checksum(of: file, offset: offset, length: length)
            }
            return try await uploader.slots.withTypedSlot(bytes: length) { () throws(UploadError) -> Reply in
                let body = FileSlice(descriptor: file.descriptor, offset: offset, length: length)
                let onProgress: @Sendable (Int64) -> Void = { bytes in
                    journal?.progress(bytesSent: tally.update(part: number, bytes: bytes))
                }
                do {
                    let reply: Reply
                    if let header {
                        reply = (
                            try await client.uploadPart(
                                bucket: bucket, key: key, uploadID: uploadID, partNumber: number, body: body, checksum: header,
                                onProgress: onProgress),
                            header)
                    } else {
                        let answer = try await client.uploadPartChecksummedInFlight(
                            bucket: bucket, key: key, uploadID: uploadID, partNumber: number, body: body, onProgress: onProgress)
                        guard let sum = answer.checksum else {
                            // Not answered as the profile says: this part and the ones after it go
                            // with the checksum in a header (the retry reads the profile again).
                            uploader.profile.partsNotEchoed()
                            throw S3ClientError.service(S3ServiceError(
                                status: 400, code: "BadDigest",
                                message: "the reply to part \(number) carries no CRC-32C; it is sent again with one"))
                        }
                        reply = (answer.etag, sum)
                    }
                    sent.add(length)
                    return reply
                } catch {
                    throw .s3(S3ClientError(error))
                }
            }
        }
        let part = UploadedPart(partNumber: number, etag: etag, size: length, checksum: checksum)
        do { try await journal?.partFinished(part, checksum: checksum) } catch { throw .store(error) }
        return part
    }

    private func abort(_ uploadID: String) async {
        // Best effort, a few tries: an abandoned upload costs storage until the bucket's lifecycle removes it.
        _ = try? await uploader.withRetries("AbortMultipartUpload \(key)") { () throws(UploadError) -> Void in
            do { try await client.abortMultipartUpload(bucket: bucket, key: key, uploadID: uploadID) } catch {
                throw .s3(S3ClientError(error))
            }
        }
    }
}

/// Whether an upload took the object an earlier try completed (then its own is aborted).
final class Taken: Sendable {
    let flag = Atomic<Bool>(false)
}

/// Sums the bytes sent by parts in flight for one progress figure.
final class ProgressTally: Sendable {
    private let state: Mutex<(base: Int64, parts: [Int: Int64])>

    init(base: Int64) { state = Mutex((base, [:])) }

    func update(part: Int, bytes: Int64) -> Int64 {
        state.withLock { state in
            state.parts[part] = bytes
            return state.base + state.parts.values.reduce(0, +)
        }
    }
}
