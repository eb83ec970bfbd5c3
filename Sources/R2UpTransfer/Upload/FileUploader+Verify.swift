import Foundation
import R2UpModel

/// What makes an upload confirmed: the bytes the server stored are the bytes hashed, and a HEAD
/// of the finished object finds it with the size sent.
extension FileUploader {
    /// Whether the server refuses a body that does not match `checksum` (`ServerProfile`), or
    /// its ETag is the MD5 r2up hashed: the object is exactly the bytes hashed before sending.
    static func storedAsHashed(_ reply: PutReply, checksum: PayloadChecksum, endpoint: S3Endpoint) -> Bool {
        let profile = ServerProfile.identify(endpoint: endpoint, serverHeader: reply.server)
        if profile.verifies(checksum.check) { return true }
        guard profile.singlePutETagIsMD5, case .md5(let sent) = checksum else { return false }
        return etag(reply.etag, isMD5: sent)
    }

    /// Whether `etag` is the hex form of the base64 MD5 `md5` (any case).
    static func etag(_ etag: String, isMD5 md5: String) -> Bool {
        hex(base64: md5).map { $0 == etag.lowercased() } ?? false
    }

    static func isHexMD5(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }
    }

    static func hex(base64: String) -> String? {
        guard let bytes = Data(base64Encoded: base64) else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// HEAD the finished object: it must exist with the size sent (and the ETag the PUT returned).
    /// A mismatch is looked at once more after a moment (a replica may lag) before it counts.
    func verify(bucket: String, key: String, size: Int64, etag: String?) async throws(UploadError) {
        do throws(UploadError) {
            try await verifyOnce(bucket: bucket, key: key, size: size, etag: etag)
        } catch .verificationFailed {
            try? await Task.sleep(for: .milliseconds(250))
            try await verifyOnce(bucket: bucket, key: key, size: size, etag: etag)
        }
    }

    private func verifyOnce(bucket: String, key: String, size: Int64, etag: String?) async throws(UploadError) {
        let info: ObjectInfo?
        do {
            info = try await withRetries("HEAD \(key)") { () throws(UploadError) -> ObjectInfo? in
                do { return try await client.headObject(bucket: bucket, key: key) } catch { throw .s3(S3ClientError(error)) }
            }
        } catch .s3(.transfer(let failure)) where failure.kind == .connectionReset {
            // Every HEAD came without an ETag. A reply cut short does that once in a while; a
            // server that keeps no ETags (juicefs gateway without --keep-etag) every time, and no
            // number of tries helps: say so, once (DESIGN §6: such a reply is never a success).
            if let whole = try? await client.headDetails(bucket: bucket, key: key), whole.etag.isEmpty, whole.size == size {
                throw .verificationFailed(
                    key: key,
                    reason: "the server's HEAD replies carry no ETag, which S3 always sends, so the upload cannot be confirmed (the object is there, unconfirmed; a juicefs gateway needs \(OptionName.keepETag.option))")
            }
            throw .s3(.transfer(failure))
        } catch .s3(let failure) where failure.failureKind.retryClass == .retryable {
            // The write was answered; only the check failed. Trying the whole upload again would
            // meet its own object at the key (a 412 read as another's object): say what happened.
            throw .unconfirmed(key: key, reason: "its verifying HEAD kept failing (last: \(failure))")
        }
        guard let info else { throw .verificationFailed(key: key, reason: "the object is missing after upload") }
        guard info.size == size else {
            throw .verificationFailed(key: key, reason: "its size is \(info.size) bytes, \(size) were sent")
        }
        if let etag, !etag.isEmpty, !info.etag.isEmpty, info.etag != etag {
            throw .verificationFailed(key: key, reason: "its ETag is \(info.etag), the upload returned \(etag)")
        }
    }
}
