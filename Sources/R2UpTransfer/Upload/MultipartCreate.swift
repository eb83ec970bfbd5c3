import Foundation
import R2UpModel

/// When one CreateMultipartUpload request was sent and when its outcome came back, on this
/// process's monotonic clock.
struct CreateAttempt: Sendable, Equatable {
    var sent: ContinuousClock.Instant
    var ended: ContinuousClock.Instant
}

/// Which listed uploads are this process's own, started by a Create request whose reply never
/// came (docs/explanation/integrity.md, "A Create whose reply was lost").
///
/// The rule needs no clock offset: the server's `Initiated` of the upload r2up did learn
/// (`own`, made inside the local span `answered`) anchors the others. An upload made by a lost
/// attempt was initiated inside that attempt's span, so its `Initiated` minus the anchor's
/// lies within [lost.sent − answered.ended, lost.ended − answered.sent], widened by the
/// timestamp's `precision` (SeaweedFS keeps whole seconds). Only uploads of exactly this key,
/// with an `Initiated`, inside the window of one of the lost attempts are taken; without the
/// anchor (not listed, no `Initiated`) nothing is.
enum LostCreates {
    static let precision: TimeInterval = 1

    static func orphans(
        in uploads: [PendingMultipartUpload], key: String, own: String, answered: CreateAttempt, lost: [CreateAttempt],
        precision: TimeInterval = precision
    ) -> [PendingMultipartUpload] {
        guard !lost.isEmpty, let anchor = uploads.first(where: { $0.key == key && $0.uploadID == own })?.initiated else {
            return []
        }
        return uploads.filter { upload in
            guard upload.key == key, upload.uploadID != own, !upload.uploadID.isEmpty, let initiated = upload.initiated
            else { return false }
            let offset = initiated.timeIntervalSince(anchor)
            return lost.contains { attempt in
                offset >= seconds(attempt.sent - answered.ended) - precision
                    && offset <= seconds(attempt.ended - answered.sent) + precision
            }
        }
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (whole, fraction) = duration.components
        return TimeInterval(whole) + TimeInterval(fraction) / 1e18
    }

    /// Whether a failed Create may still have made an upload: any failure but a connection
    /// that was never made (refused, a name that did not resolve, a bad URL).
    static func mayHaveCreated(_ failure: S3ClientError) -> Bool {
        guard case .transfer(let error) = failure else { return true }
        switch error.kind {
        case .connectionRefused, .dnsFailure, .malformedURL: return false
        default: return true
        }
    }
}

extension FileUploader {
    /// CreateMultipartUpload with request retries. A try whose reply was lost (cut, timed out,
    /// garbled) may have made an upload no one will ever know the id of: once a try is answered,
    /// those uploads are found by the rule of `LostCreates` and aborted (best effort).
    func createMultipartUpload(
        bucket: String, key: String, attributes: ObjectAttributes, check: IntegrityCheck, label: String
    ) async throws(UploadError) -> String {
        let clock = ContinuousClock()
        var lost: [CreateAttempt] = []
        let (uploadID, answered) = try await withRetries(label) { () throws(UploadError) -> (String, CreateAttempt) in
            let sent = clock.now
            do {
                let uploadID = try await client.createMultipartUpload(
                    bucket: bucket, key: key, attributes: attributes, check: check)
                return (uploadID, CreateAttempt(sent: sent, ended: clock.now))
            } catch {
                let failure = S3ClientError(error)
                if LostCreates.mayHaveCreated(failure) { lost.append(CreateAttempt(sent: sent, ended: clock.now)) }
                throw .s3(failure)
            }
        }
        if !lost.isEmpty {
            await abortLostCreates(bucket: bucket, key: key, own: uploadID, answered: answered, lost: lost)
        }
        return uploadID
    }

    private func abortLostCreates(
        bucket: String, key: String, own: String, answered: CreateAttempt, lost: [CreateAttempt]
    ) async {
        guard
            let listed = try? await withRetries("ListMultipartUploads \(key)", { () throws(UploadError) -> [PendingMultipartUpload] in
                do { return try await client.listMultipartUploads(bucket: bucket, prefix: key) } catch {
                    throw .s3(S3ClientError(error))
                }
            })
        else { return }
        for orphan in LostCreates.orphans(in: listed, key: key, own: own, answered: answered, lost: lost) {
            _ = try? await withRetries("AbortMultipartUpload \(key)") { () throws(UploadError) -> Void in
                do { try await client.abortMultipartUpload(bucket: bucket, key: key, uploadID: orphan.uploadID) } catch {
                    throw .s3(S3ClientError(error))
                }
            }
        }
    }
}
