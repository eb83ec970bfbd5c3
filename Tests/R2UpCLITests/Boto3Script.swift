import Foundation
import R2UpTestSupport

/// boto3, the independent client, on the test server: `body` runs with `s3` (the client),
/// `bucket` and `sys` ready, and `arguments` as `sys.argv[1...]`; returns what it printed.
enum Boto3Script {
    static func run(_ body: String, _ arguments: [String]) async throws -> String {
        let script = """
            import boto3, os, sys
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            bucket = e["R2UP_TEST_BUCKET"]

            """ + body
        let result = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", script] + arguments, environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("boto3 failed: \(result.stderr)") }
        return result.stdout
    }
}
