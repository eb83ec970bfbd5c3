import Foundation
public import SigV4

extension S3Client {
    /// A presigned GET URL for a key, valid `seconds` (1 s to 7 days), made offline.
    public func presignedURL(bucket: String, key: String, expires seconds: Int, method: String = "GET") throws(SigV4Error) -> String {
        let request = SigningRequest(
            method: method, host: endpoint.authority(bucket: bucket), path: endpoint.path(bucket: bucket, key: key),
            query: [], headers: [])
        let query = try signer.presign(request, expires: seconds, date: now)
        var signed = request
        signed.query = query
        return "\(endpoint.scheme)://\(request.host)\(signed.encodedPath)?\(signed.encodedQuery)"
    }
}
