import Foundation
import SigV4
import R2UpModel
import R2UpTransfer

extension R2UpSession {
    /// Everything a session needs, as plain values: no environment variable or file is read.
    ///
    /// ```swift
    /// let configuration = R2UpSession.Configuration(
    ///     endpoint: "https://ACCOUNT_ID.r2.cloudflarestorage.com",
    ///     accessKeyID: keyID, secretAccessKey: secret,
    ///     bucket: "music", publicURL: "https://music.example.com",
    ///     databasePath: appSupport + "/r2up.sqlite")
    /// ```
    ///
    /// ``R2UpSession/init(_:)`` checks every value before anything is sent or written.
    public struct Configuration: Sendable, Equatable {
        /// How object URLs name the bucket.
        public enum Addressing: String, Sendable, Equatable {
            /// `https://host/bucket/key`: works with every provider (R2, MinIO, SeaweedFS).
            case pathStyle
            /// `https://bucket.host/key`.
            case virtualHosted
        }

        /// The S3 API endpoint, an http(s) URL: for R2 `https://ACCOUNT_ID.r2.cloudflarestorage.com`.
        public var endpoint: String
        /// The access key id (R2: the API token's "Access Key ID").
        public var accessKeyID: String
        /// Never printed, not even in an error.
        public var secretAccessKey: String
        /// For temporary credentials.
        public var sessionToken: String?
        /// The signing region; nil means `auto` for R2 and `us-east-1` elsewhere.
        public var region: String?
        /// The bucket files go to.
        public var bucket: String
        /// Where uploaded objects are served from (an r2.dev URL or a custom domain); nil gives
        /// path-style URLs on the endpoint.
        public var publicURL: String?
        /// The SQLite database that keeps the queue, the track states and the history. Its
        /// folder must exist and be writable (see ``createsDatabaseFolder``).
        public var databasePath: String
        public var addressing: Addressing = .pathStyle
        /// A PEM file of CA certificates to trust for HTTPS instead of the system's; nil trusts the system's.
        public var caBundle: String?
        /// Requests in flight at once, parts included (1–512); nil lets r2up find the depth
        /// from what finished requests show (`DepthController`).
        public var concurrency: Int?
        /// The total upload rate in bytes a second; nil is unlimited.
        public var bandwidthLimit: Int64?
        /// Whether a missing database folder is created (mode 0700) rather than refused.
        public var createsDatabaseFolder = false

        /// A configuration of these values; nothing is checked until ``R2UpSession/init(_:)``.
        public init(
            endpoint: String, accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil,
            region: String? = nil, bucket: String, publicURL: String? = nil, databasePath: String,
            addressing: Addressing = .pathStyle
        ) {
            self.endpoint = endpoint
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
            self.region = region
            self.bucket = bucket
            self.publicURL = publicURL
            self.databasePath = databasePath
            self.addressing = addressing
        }

        /// The CLI's resolved settings as a configuration: the one path from flags, environment
        /// and files to the queue. A missing endpoint, credential or bucket is said as the CLI says it.
        package init(settings: Settings) throws(ConfigurationError) {
            guard let endpoint = settings.endpoint else { throw .missingEndpoint }
            _ = try settings.requireEndpoint()
            let bucket = try settings.requireBucket()
            let credentials = try settings.requireCredentials()
            self.init(
                endpoint: endpoint.value, accessKeyID: credentials.accessKeyID,
                secretAccessKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken,
                region: settings.region.value, bucket: bucket,
                publicURL: settings.publicURL?.value, databasePath: settings.database.value,
                addressing: settings.addressing.value == .virtualHosted ? .virtualHosted : .pathStyle)
            caBundle = settings.caBundle
            createsDatabaseFolder = true  // the CLI's default folder is made on first use
        }

        /// Custom so that printing a configuration never shows the secret.
        public static func == (a: Configuration, b: Configuration) -> Bool {
            a.endpoint == b.endpoint && a.accessKeyID == b.accessKeyID && a.secretAccessKey == b.secretAccessKey
                && a.sessionToken == b.sessionToken && a.region == b.region && a.bucket == b.bucket
                && a.publicURL == b.publicURL && a.databasePath == b.databasePath && a.addressing == b.addressing
                && a.caBundle == b.caBundle && a.concurrency == b.concurrency && a.bandwidthLimit == b.bandwidthLimit
                && a.createsDatabaseFolder == b.createsDatabaseFolder
        }
    }
}

extension R2UpSession.Configuration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The values without the secret, for logs and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// The values without the secret.
    public var description: String {
        "Configuration(endpoint: \(endpoint), accessKeyID: \(accessKeyID), secretAccessKey: <hidden>, bucket: \(bucket), databasePath: \(databasePath))"
    }
    /// The values without the secret.
    public var debugDescription: String { description }
}

/// The values a configuration's check found good, ready for the transfer layer.
struct CheckedConnection: Sendable {
    var endpoint: S3Endpoint
    var region: String
    var credentials: Credentials
    var bucket: String
    var publicURL: String?
}

extension R2UpSession.Configuration {
    /// Checks the values the S3 side uses; each refusal names the setting (and its value, unless secret).
    func checkedConnection() throws(ConfigurationError) -> CheckedConnection {
        let endpoint = try S3Endpoint(
            url: endpoint, addressing: addressing == .virtualHosted ? .virtualHosted : .pathStyle)
        if accessKeyID.isEmpty {
            throw .invalidValue(setting: "the access key id", value: accessKeyID, reason: "it is empty")
        }
        if let problem = HeaderValue.problem(accessKeyID) {
            throw .invalidValue(setting: "the access key id", value: TextColumns.printable(accessKeyID), reason: problem)
        }
        // Signed into every request: a control character (a pasted newline) would never sign right.
        if secretAccessKey.isEmpty { throw .invalidSecret(setting: "the secret access key", reason: "it is empty") }
        if let problem = Self.controlCharacter(secretAccessKey) {
            throw .invalidSecret(setting: "the secret access key", reason: problem)
        }
        if let sessionToken, let problem = Self.controlCharacter(sessionToken) {
            throw .invalidSecret(setting: "the session token", reason: problem)
        }
        let region = region ?? (endpoint.isR2 ? "auto" : "us-east-1")
        if let problem = region.isEmpty ? "it is empty" : HeaderValue.problem(region) ?? (region.contains(" ") ? "it holds a space" : nil) {
            throw .invalidValue(setting: "the region", value: TextColumns.printable(region), reason: problem)
        }
        if bucket.isEmpty { throw .invalidValue(setting: "the bucket", value: bucket, reason: "it is empty") }
        if let rule = BucketName.problem(bucket) {
            throw .invalidValue(setting: "the bucket", value: TextColumns.printable(bucket), reason: rule)
        }
        var base: String?
        if let publicURL {
            switch PublicBase.validated(publicURL) {
            case .success(let text): base = text
            case .failure(let problem):
                throw .invalidValue(setting: "the public URL", value: TextColumns.printable(publicURL), reason: problem.reason)
            }
        }
        if let bandwidthLimit, bandwidthLimit <= 0 {
            throw .invalidValue(setting: "the bandwidth limit", value: String(bandwidthLimit), reason: "it must be above 0")
        }
        if let concurrency, !(1...DepthController.maximumDepth).contains(concurrency) {
            throw .invalidValue(
                setting: "the concurrency", value: String(concurrency), reason: "it must be from 1 to \(DepthController.maximumDepth)")
        }
        if let caBundle, let problem = Self.caBundleProblem(caBundle) {
            throw .invalidValue(setting: "the CA bundle", value: TextColumns.printable(caBundle), reason: problem)
        }
        let credentials = Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)
        return CheckedConnection(endpoint: endpoint, region: region, credentials: credentials, bucket: bucket, publicURL: base)
    }

    /// Checks that the database can be made or opened where it is asked for, writing nothing.
    func checkDatabasePath() throws(ConfigurationError) {
        let path = databasePath
        func refuse(_ reason: String) -> ConfigurationError {
            .invalidValue(setting: "the database path", value: TextColumns.printable(path), reason: reason)
        }
        if path.isEmpty { throw refuse("it is empty") }
        if path.hasSuffix("/") { throw refuse("it names a folder, not a file") }
        if HeaderValue.problem(path) != nil { throw refuse("it holds a control character") }
        let absolute = FilePath.absolute(path)
        var folder = (absolute as NSString).deletingLastPathComponent
        if folder.isEmpty { folder = "/" }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw refuse("\(folder) is not a folder") }
            // WAL needs -wal and -shm files beside the database: the folder must be writable.
            guard access(folder, W_OK) == 0 else { throw refuse("its folder \(folder) is read-only") }
        } else if !createsDatabaseFolder {
            throw refuse("its folder \(folder) does not exist")
        }
        if FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw refuse("it is a folder") }
            guard access(absolute, R_OK | W_OK) == 0 else { throw refuse("the file is read-only") }
        }
    }

    /// Why the CA bundle at `path` cannot be read, or nil: said before any request, naming the
    /// file, where curl would answer the first HTTPS request with "problem with the SSL CA cert".
    package static func caBundleProblem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
        if isDirectory.boolValue { return "it is a folder, not a PEM file" }
        guard access(path, R_OK) == 0 else { return "it cannot be read: \(String(cString: strerror(errno)))" }
        return nil
    }

    private static func controlCharacter(_ text: String) -> String? {
        guard let bad = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        let name = bad == "\n" ? "a newline" : bad == "\r" ? "a carriage return" : bad == "\t" ? "a tab" : "a control character"
        return "it holds \(name) (U+\(String(bad.value, radix: 16, uppercase: true).leftPadded(to: 4)))"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
