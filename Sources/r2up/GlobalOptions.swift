import ArgumentParser
import R2UpKit

/// Options every command takes: where to connect and how to talk.
struct GlobalOptions: ParsableArguments {
    @Option(help: "Named profile in ~/.aws/config, ~/.aws/credentials or the r2up config.")
    var profile: String?

    @Option(help: "S3 endpoint URL, e.g. https://ACCOUNT_ID.r2.cloudflarestorage.com.")
    var endpoint: String?

    @Option(help: "Signing region (default: auto for R2, else us-east-1).")
    var region: String?

    @Option(help: "Bucket name.")
    var bucket: String?

    @Option(name: .customLong("public-url"), help: "Public URL base (an r2.dev URL or a custom domain).")
    var publicURL: String?

    @Option(name: .customLong("db"), help: "Path of the SQLite database.")
    var database: String?

    @Flag(name: .customLong("path-style"), help: "Address buckets as https://host/bucket/key (default).")
    var pathStyle = false

    @Flag(name: .customLong("virtual-hosted"), help: "Address buckets as https://bucket.host/key.")
    var virtualHosted = false

    @Option(name: .customLong("ca-bundle"), help: "PEM file of CA certificates to trust for HTTPS, instead of the system's.")
    var caBundle: String?

    @Flag(name: [.short, .long], help: "Print errors only.")
    var quiet = false

    @Flag(
        name: [.short, .long],
        help: "Also print how the run went: the requests kept in flight and why (with --quiet: errors and that line only).")
    var verbose = false

    /// Flags that build URLs or name the bucket are checked here, before anything is sent
    /// (exit 2); the same values from the environment or a file are checked by the resolver (exit 3).
    func validate() throws {
        if pathStyle && virtualHosted {
            throw ValidationError("--path-style and --virtual-hosted cannot be used together")
        }
        if let endpoint {
            if let problem = EndpointRule.problem(endpoint) { throw ValidationError("--endpoint: \(problem)") }
        }
        if let publicURL, case .failure(let problem) = PublicBase.validated(publicURL) {
            throw ValidationError("--public-url: \(problem.description)")
        }
        if let bucket, let rule = BucketName.problem(bucket) {
            throw ValidationError("--bucket '\(bucket)' is not a valid bucket name: \(rule)")
        }
        if let region, let problem = HeaderValue.problem(region) {
            throw ValidationError("--region: \(problem)")
        }
        if let caBundle, let problem = R2UpSession.Configuration.caBundleProblem(caBundle) {
            throw ValidationError("--ca-bundle \(TextColumns.printable(caBundle)): \(problem)")
        }
    }

    var overrides: SettingOverrides {
        var overrides = SettingOverrides()
        overrides.profile = profile
        overrides.endpoint = endpoint
        overrides.region = region
        overrides.bucket = bucket
        overrides.publicURL = publicURL
        overrides.database = database
        overrides.caBundle = caBundle
        if pathStyle { overrides.setAddressing(pathStyle: true) }
        if virtualHosted { overrides.setAddressing(pathStyle: false) }
        return overrides
    }

    /// Resolves settings and prints any warnings found on the way (on stderr).
    func settings() throws(ConfigurationError) -> Settings {
        let settings = try SettingsResolver().resolve(overrides)
        for warning in settings.warnings { Terminal.error(warning) }
        return settings
    }

    /// The settings, the bucket's service (with `options`) and the local store, which a command
    /// that changes both opens first; whatever fails is the command's failure.
    func open(_ options: RunOptions = RunOptions()) throws(CommandFailure) -> (settings: Settings, service: UploadService, store: LocalStore) {
        do {
            let settings = try settings()
            return (settings, try UploadService(settings: settings, options: options), try LocalStore(path: settings.database.value))
        } catch {
            throw CommandFailure(error)
        }
    }
}

/// Options for commands that move bytes.
struct TransferOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: "Requests in flight at once, parts included (1-512; fewer where 64 MiB of memory holds fewer); default: found as the run goes, from the link and the server's replies.")
    var concurrency: ConcurrencyValue?

    @Option(parsing: .unconditional, help: "Total upload rate limit, e.g. 500K, 10M (bytes a second).")
    var bwlimit: String?

    @Option(name: .customLong("part-size"), parsing: .unconditional, help: "Multipart part size, e.g. 8M (5M to 5G).")
    var partSize: String?

    @Option(name: .customLong("multipart-threshold"), parsing: .unconditional, help: "Files above this size upload in parts (default 8M).")
    var multipartThreshold: String?

    @Option(
        help: ArgumentHelp(
            "Checksum each request carries for the server to verify: md5, crc32 or crc32c (default: md5 for R2, and for a MinIO or juicefs gateway once it has answered, which verifies only MD5; crc32c elsewhere).",
            valueName: "md5|crc32|crc32c"))
    var checksum: ChecksumChoice?

    @Option(
        help: ArgumentHelp(
            "How a single-PUT upload is confirmed: reply (the server-verified checksum, its 2xx reply and ETag; one request per file) or head (a HEAD also checks size and ETag). Default: reply where the server is known to verify the checksum sent (R2, S3, SeaweedFS, MinIO), else head. Multipart uploads are always checked with a HEAD.",
            valueName: "head|reply"))
    var verify: SinglePutCheck?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How many times a failed request is sent again (0-20, default 4), with backoff: network errors, timeouts, 5xx, 429, SlowDown.",
            valueName: "N"))
    var retries: Int?

    func validate() throws {
        if let retries, !(0...20).contains(retries) {
            throw ValidationError("--retries must be from 0 to 20, got \(retries)")
        }
        try concurrency?.check()
        if let bwlimit, ByteSize.parse(bwlimit).map({ $0 > 0 }) != true {
            throw ValidationError("--bwlimit '\(bwlimit)' is not a rate like 500K or 10M")
        }
        if let partSize {
            guard let bytes = ByteSize.parse(partSize) else {
                throw ValidationError("--part-size '\(partSize)' is not a size like 8M")
            }
            guard RunOptions.partSizes.contains(bytes) else {
                throw ValidationError("--part-size must be from 5M to 5G, got \(partSize)")
            }
        }
        if let multipartThreshold, ByteSize.parse(multipartThreshold) == nil {
            throw ValidationError("--multipart-threshold '\(multipartThreshold)' is not a size like 8M")
        }
    }

    var runOptions: RunOptions {
        var options = RunOptions.forTransfers()
        options.concurrency = concurrency?.depth
        options.bandwidthLimit = bwlimit.flatMap(ByteSize.parse)
        if let size = partSize.flatMap(ByteSize.parse) { options.partSize = size }
        if let size = multipartThreshold.flatMap(ByteSize.parse) { options.multipartThreshold = size }
        options.checksum = checksum
        options.headAfterPut = verify.map { $0 == .head }
        if let retries { options.maxAttempts = retries + 1 }
        return options
    }
}

extension ChecksumChoice: ExpressibleByArgument {}

/// `--verify`: what confirms a single-PUT upload.
enum SinglePutCheck: String, ExpressibleByArgument, CaseIterable {
    case head, reply
}

/// Flags sent as HTTP header values: a CR, LF or other control character would end the header
/// and start another (header injection), so such a value is refused before anything is sent.
enum HeaderFlags {
    static func check(_ flags: KeyValuePairs<String, String?>) throws {
        for case let (flag, value?) in flags {
            if let problem = HeaderValue.problem(value) { throw ValidationError("\(flag): \(problem); it is sent as an HTTP header") }
        }
    }
}
