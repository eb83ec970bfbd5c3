import Foundation

/// Reads what the server stored with boto3, a client that shares no code with r2up.
public enum IndependentClient {
    public struct StoredObject: Decodable, Equatable {
        public var key: String
        public var size: Int64
        public var sha256: String

        public init(key: String, size: Int64, sha256: String) {
            self.key = key
            self.size = size
            self.sha256 = sha256
        }
    }

    /// Size and SHA-256 of each key as boto3 downloads it (nil entries: the key is missing).
    public static func fetch(_ keys: [String], bucket: String, server: TestServer) async throws -> [String: StoredObject] {
        let script = """
            import boto3, hashlib, json, sys
            from botocore.config import Config
            request = json.load(sys.stdin)
            s3 = boto3.client("s3", endpoint_url=request["endpoint"], aws_access_key_id=request["access"],
                              aws_secret_access_key=request["secret"], region_name="us-east-1",
                              config=Config(s3={"addressing_style": "path"}))
            out = {}
            for key in request["keys"]:
                try:
                    body = s3.get_object(Bucket=request["bucket"], Key=key)["Body"]
                except s3.exceptions.NoSuchKey:
                    continue
                digest, size = hashlib.sha256(), 0
                for chunk in iter(lambda: body.read(1 << 20), b""):
                    digest.update(chunk); size += len(chunk)
                out[key] = {"key": key, "size": size, "sha256": digest.hexdigest()}
            json.dump(out, sys.stdout)
            """
        let input: [String: Any] = [
            "endpoint": server.endpoint, "access": server.accessKey, "secret": server.secretKey,
            "bucket": bucket, "keys": keys,
        ]
        let result = try await Subprocess.run(
            "/usr/bin/env", ["python3", "-c", script], stdin: try JSONSerialization.data(withJSONObject: input))
        guard result.status == 0 else { throw TestSetupError("boto3 failed: \(result.stderrText)") }
        return try JSONDecoder().decode([String: StoredObject].self, from: result.stdout)
    }

    /// Keys of unfinished multipart uploads in a bucket, listed by boto3.
    public static func pendingMultipartUploads(bucket: String, prefix: String, server: TestServer) async throws -> [String] {
        let script = """
            import boto3, json, sys
            r = json.load(sys.stdin)
            s3 = boto3.client("s3", endpoint_url=r["endpoint"], aws_access_key_id=r["access"],
                              aws_secret_access_key=r["secret"], region_name="us-east-1")
            uploads = s3.list_multipart_uploads(Bucket=r["bucket"], Prefix=r["prefix"]).get("Uploads", [])
            json.dump([u["Key"] for u in uploads], sys.stdout)
            """
        let input: [String: Any] = [
            "endpoint": server.endpoint, "access": server.accessKey, "secret": server.secretKey, "bucket": bucket,
            "prefix": prefix,
        ]
        let result = try await Subprocess.run(
            "/usr/bin/env", ["python3", "-c", script], stdin: try JSONSerialization.data(withJSONObject: input))
        guard result.status == 0 else { throw TestSetupError("boto3 failed: \(result.stderrText)") }
        return try JSONDecoder().decode([String].self, from: result.stdout)
    }
}
