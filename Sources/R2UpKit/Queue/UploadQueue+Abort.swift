import Foundation
import R2UpModel
import R2UpStore
import R2UpTransfer

extension UploadQueue {
    /// Aborts a multipart upload r2up no longer needs; one that cannot be aborted now is
    /// recorded, and the next run tries again (`abortAbandonedUploads`).
    /// - Returns: whether the upload is gone from the server.
    @discardableResult
    func abort(bucket: String, key: String, uploadID: String) async -> Bool {
        do {
            try await service.client.abortMultipartUpload(bucket: bucket, key: key, uploadID: uploadID)
            return true
        } catch .service(let failure) where failure.code == "NoSuchUpload" || failure.status == 404 {
            return true
        } catch {
            let message = Diagnosis(error).message
            try? await writer.perform { store throws(StoreError) in
                try store.recordAbandoned(bucket: bucket, key: key, uploadID: uploadID, error: message)
            }
            return false
        }
    }

    /// Aborts the multipart uploads earlier runs gave up on but could not abort.
    /// - Returns: how many are still left on the server.
    @discardableResult
    package func abortAbandonedUploads() async -> Int {
        let bucket = service.bucket
        guard let left = try? await writer.perform({ store throws(StoreError) in try store.abandonedUploads(bucket: bucket) })
        else { return 0 }
        var remaining = 0
        for upload in left {
            guard await abort(bucket: upload.bucket, key: upload.key, uploadID: upload.uploadID) else {
                remaining += 1
                continue
            }
            try? await writer.perform { store throws(StoreError) in
                try store.forgetAbandoned(bucket: upload.bucket, key: upload.key, uploadID: upload.uploadID)
            }
        }
        return remaining
    }

    /// Aborts multipart uploads the server holds under keys r2up owns (a key of one of this
    /// store's tracks or jobs) that no unfinished job uses: a run killed between
    /// CreateMultipartUpload's answer and its record left them. One listing request.
    /// - Returns: how many were aborted.
    @discardableResult
    package func abortOrphanedUploads() async -> Int {
        let bucket = service.bucket
        guard let pending = try? await service.client.listMultipartUploads(bucket: bucket), !pending.isEmpty else { return 0 }
        let candidates = pending.map { (key: ObjectKey.nfc($0.key), raw: $0.key, uploadID: $0.uploadID) }
        guard
            let orphans = try? await writer.perform({ store throws(StoreError) in
                try store.orphanedUploads(bucket: bucket, among: candidates.map { ($0.key, $0.uploadID) })
            })
        else { return 0 }
        var aborted = 0
        for candidate in candidates where orphans.contains(candidate.uploadID) {
            await abort(bucket: bucket, key: candidate.raw, uploadID: candidate.uploadID)
            aborted += 1
        }
        return aborted
    }
}
