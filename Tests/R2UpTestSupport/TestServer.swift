import Foundation
import Testing
import GRDB
package import R2UpKit

/// The SeaweedFS server `scripts/test.sh` starts, described by its environment.
public struct TestServer: Sendable {
    public var endpoint: String
    public var accessKey: String
    public var secretKey: String
    public var bucket: String
    public var publicURL: String
    /// An identity without Admin rights: SeaweedFS creates a missing bucket on an admin's PUT.
    public var writerAccessKey: String
    public var writerSecretKey: String

    /// The running server, or a failure that says how to start one.
    public static func require() throws -> TestServer {
        let env = ProcessInfo.processInfo.environment
        guard let endpoint = env["R2UP_TEST_ENDPOINT"], let access = env["R2UP_TEST_ACCESS_KEY"],
            let secret = env["R2UP_TEST_SECRET_KEY"], let bucket = env["R2UP_TEST_BUCKET"]
        else {
            throw TestSetupError("no test server: run the tests with scripts/test.sh, which starts SeaweedFS")
        }
        return TestServer(
            endpoint: endpoint, accessKey: access, secretKey: secret, bucket: bucket,
            publicURL: env["R2UP_TEST_PUBLIC_URL"] ?? "\(endpoint)/\(bucket)",
            writerAccessKey: env["R2UP_TEST_WRITER_ACCESS_KEY"] ?? "r2upwriterkey",
            writerSecretKey: env["R2UP_TEST_WRITER_SECRET_KEY"] ?? "r2upwritersecret-0123456789abcdef")
    }

    /// Settings as a user with these credentials would have them.
    package func settings(
        endpoint: String? = nil, bucket: String? = nil, secret: String? = nil, asWriter: Bool = false
    ) throws -> Settings {
        var overrides = SettingOverrides()
        overrides.endpoint = endpoint ?? self.endpoint
        overrides.bucket = bucket ?? self.bucket
        overrides.publicURL = publicURL
        var variables = SettingVariables()
        variables.accessKeyID = SettingVariable(name: "AWS_ACCESS_KEY_ID", value: asWriter ? writerAccessKey : accessKey)
        variables.secretAccessKey = SettingVariable(
            name: "AWS_SECRET_ACCESS_KEY", value: secret ?? (asWriter ? writerSecretKey : secretKey))
        let resolver = SettingsResolver(variables: variables, locations: ConfigLocations(homeDirectory: "/nonexistent"))
        return try resolver.resolve(overrides)
    }

    package func service(options: RunOptions = RunOptions(), endpoint: String? = nil, bucket: String? = nil) throws -> UploadService {
        try UploadService(settings: settings(endpoint: endpoint, bucket: bucket), options: options)
    }

    /// Environment for the r2up binary and for aws/boto3.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["R2UP_ENDPOINT"] = endpoint
        env["AWS_ACCESS_KEY_ID"] = accessKey
        env["AWS_SECRET_ACCESS_KEY"] = secretKey
        env["AWS_REGION"] = "us-east-1"
        env["R2UP_BUCKET"] = bucket
        env["R2UP_PUBLIC_URL"] = publicURL
        return env
    }

    /// A key prefix of its own for one test, so tests running in parallel never see each other's objects.
    /// (One bucket for all: SeaweedFS gives each bucket its own volumes and runs out after a few dozen.)
    public func scratchPrefix(_ label: String) -> String {
        "tests/\(label)-\(UInt32.random(in: 0...UInt32.max))/"
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
