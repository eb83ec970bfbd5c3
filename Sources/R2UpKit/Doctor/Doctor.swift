public import Foundation
import SigV4
public import R2UpModel
import R2UpStore
import R2UpTransfer

/// `r2up doctor`: checks, in order, that the settings resolve, credentials are there, the
/// endpoint answers (over verified TLS for https), the bucket exists, an object can be
/// written and deleted, the clock agrees with the server's, a clipboard tool is there and
/// the database opens. A check whose prerequisite failed is reported as skipped.
///
/// Nothing here prints; each result goes to `report` as soon as it is known, so a slow
/// endpoint does not hold back the lines before it. No result holds a secret.
public struct Doctor: Sendable {
    /// The settings, or why they could not be resolved.
    public var settings: Result<Settings, ConfigurationError>
    /// The files the settings may come from, in the order they are read.
    public var configFiles: [String]
    /// The environment the settings were resolved in.
    public var environment: [String: String]
    /// The front end's own local check (the CLI's clipboard tool for copy-url), run in the
    /// place the clipboard check has in the list; nil: there is none.
    public var clipboardCheck: (@Sendable () -> DoctorCheck)?
    /// Mask with `...` rather than `…`.
    public var ascii: Bool
    /// The probe object's key.
    public var probeKey: String
    /// Give up connecting after this long.
    public var connectTimeoutSeconds = 10

    /// The clock skew over which doctor warns (S3 refuses requests 15 minutes off).
    public static let skewWarningSeconds: TimeInterval = 300

    public init(
        settings: Result<Settings, ConfigurationError>, configFiles: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment, ascii: Bool = false,
        probeKey: String = ".r2up-doctor/probe-\(UUID().uuidString.lowercased())",
        clipboardCheck: (@Sendable () -> DoctorCheck)? = nil
    ) {
        self.clipboardCheck = clipboardCheck
        self.settings = settings
        self.configFiles = configFiles
        self.environment = environment
        self.ascii = ascii
        self.probeKey = probeKey
    }

    /// Runs every check, handing each result to `report` as it is known.
    public func run(report: @Sendable (DoctorCheck) -> Void = { _ in }) async -> DoctorReport {
        var checks: [DoctorCheck] = []
        func record(_ check: DoctorCheck) {
            checks.append(check)
            report(check)
        }

        guard case .success(let settings) = settings else {
            if case .failure(let error) = settings {
                record(.fail(.config, error.description, Self.advice(for: error)))
            }
            for kind in [DoctorCheck.Kind.credentials, .endpoint, .tls, .bucket, .write, .publicURL, .clock] {
                record(.skipped(kind, because: .config))
            }
            if let clipboardCheck { record(clipboardCheck()) }
            record(.skipped(.database, because: .config))
            return DoctorReport(checks: checks)
        }

        record(configCheck(settings))
        record(credentialsCheck(settings))

        // The endpoint, TLS and the clock need only the endpoint; bucket and write need all.
        let endpoint: S3Endpoint
        let engine: TransferEngine
        do {
            endpoint = try settings.requireEndpoint()
            var options = TransferEngine.Options()
            options.caBundle = settings.caBundle
            options.connectTimeoutMilliseconds = connectTimeoutSeconds * 1000
            options.lowSpeedTimeSeconds = 20
            options.maxConnections = 2
            engine = try TransferEngine(options: options)
        } catch {
            if let error = error as? ConfigurationError {
                record(.fail(.endpoint, error.description, Self.advice(for: error)))
            } else {
                record(.fail(.endpoint, "libcurl could not start: \(error)", nil))
            }
            for kind in [DoctorCheck.Kind.tls, .bucket, .write, .publicURL, .clock] { record(.skipped(kind, because: .endpoint)) }
            if let clipboardCheck { record(clipboardCheck()) }
            record(databaseCheck(settings.database.value))
            return DoctorReport(checks: checks)
        }
        defer { engine.shutdown() }

        let probe = await probeEndpoint(endpoint, engine: engine)
        record(probe.endpoint)
        record(probe.tls)
        let reachable = probe.endpoint.outcome == .pass && probe.tls.outcome != .fail
        let blocker: DoctorCheck.Kind = probe.endpoint.outcome != .pass ? .endpoint : .tls

        if !reachable {
            record(.skipped(.bucket, because: blocker))
            record(.skipped(.write, because: blocker))
            record(.skipped(.publicURL, because: blocker))
        } else if let credentials = settings.credentials?.value {
            if let bucket = settings.bucket?.value, !bucket.isEmpty {
                let client = S3Client(
                    endpoint: endpoint, region: settings.region.value, credentials: credentials, engine: engine)
                let check = await bucketCheck(client, bucket: bucket)
                record(check)
                if check.outcome == .fail {
                    record(.skipped(.write, because: .bucket))
                    record(.skipped(.publicURL, because: .bucket))
                } else {
                    // The probe is fetched through the public URL while it is there.
                    var served = DoctorCheck.skipped(.publicURL, because: .write)
                    let write = await writeCheck(client, bucket: bucket) {
                        served = await self.publicURLCheck(settings, endpoint: endpoint, bucket: bucket, engine: engine)
                    }
                    record(write)
                    record(served)
                }
            } else {
                record(.fail(.bucket, "no bucket is set", "run r2up config init, or use \(OptionName.bucket.sources)"))
                record(.skipped(.write, because: .bucket))
                record(.skipped(.publicURL, because: .bucket))
            }
        } else {
            record(.skipped(.bucket, because: .credentials))
            record(.skipped(.write, because: .credentials))
            record(.skipped(.publicURL, because: .credentials))
        }

        record(probe.clock ?? .skipped(.clock, because: blocker))
        if let clipboardCheck { record(clipboardCheck()) }
        record(databaseCheck(settings.database.value))
        return DoctorReport(checks: checks)
    }

    // MARK: - Settings

    func configCheck(_ settings: Settings) -> DoctorCheck {
        let profile = "profile \(settings.profile.value)"
        let read = configFiles.filter(settings.filesRead.contains)
        let detail = read.isEmpty
            ? "\(profile); no config file found, settings from flags and environment only"
            : "\(profile); read \(read.joined(separator: ", "))"
        if let warning = settings.warnings.first {
            // "warning: PATH is readable by other users; run: chmod 600 PATH"
            var text = warning.hasPrefix("warning: ") ? String(warning.dropFirst(9)) : warning
            var advice: String?
            if let split = text.range(of: "; run: ") {
                advice = "run: " + text[split.upperBound...]
                text = String(text[..<split.lowerBound])
            }
            return .warning(.config, "\(detail); \(text)", advice)
        }
        return .pass(.config, detail)
    }

    func credentialsCheck(_ settings: Settings) -> DoctorCheck {
        guard let credentials = settings.credentials else {
            return .fail(
                .credentials, "no access key id and secret access key found",
                "run r2up config init, or set \(OptionName.accessKeyID.variable) and \(OptionName.secretAccessKey.variable)")
        }
        var detail = "access key id \(SettingsReport.mask(credentials.value.accessKeyID, ascii: ascii)) and a secret"
        if credentials.value.sessionToken != nil { detail += " and a session token" }
        return .pass(.credentials, detail + ", from \(credentials.source)")
    }

    static func advice(for error: ConfigurationError) -> String? {
        switch error {
        case .unknownProfile(let name): "run: r2up config init \(OptionName.profile.option) \(name)"
        case .missingEndpoint, .invalidEndpoint: "run r2up config init, or use \(OptionName.endpoint.everySource)"
        case .invalidFile: "fix that line, or run r2up config init"
        default: nil
        }
    }

    // MARK: - Endpoint, TLS and clock

    struct Probe {
        var endpoint: DoctorCheck
        var tls: DoctorCheck
        var clock: DoctorCheck?
    }

    /// One unsigned HEAD of the endpoint's root: any HTTP status shows it is reachable (and,
    /// over https, that curl verified its certificate); its `Date` header gives the clock.
    func probeEndpoint(_ endpoint: S3Endpoint, engine: TransferEngine) async -> Probe {
        let url = "\(endpoint.scheme)://\(endpoint.authority(bucket: nil))\(endpoint.path(bucket: nil, key: nil))"
        let shown = "\(endpoint.scheme)://\(endpoint.authority(bucket: nil))"
        let plain = endpoint.scheme == "http"
        let started = ContinuousClock.now
        do {
            let response = try await engine.perform(HTTPRequest(method: "HEAD", url: url))
            let elapsed = ContinuousClock.now - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            let endpointCheck = DoctorCheck.pass(
                .endpoint, "\(shown) answered (HTTP \(response.status)) in \(milliseconds) ms")
            let tls: DoctorCheck =
                plain
                ? DoctorCheck(.tls, .skipped, "plain HTTP, nothing is encrypted")
                : .pass(.tls, "the certificate of \(endpoint.host) is valid and trusted")
            return Probe(endpoint: endpointCheck, tls: tls, clock: clockCheck(response))
        } catch let error as TransferError {
            switch error.kind {
            case .tlsFailure:
                return Probe(
                    endpoint: .pass(.endpoint, "\(shown) accepted the connection"),
                    tls: .fail(
                        .tls, "the TLS handshake failed: \(error.message)",
                        "for a private CA pass \(OptionName.caBundle.option) (or \(OptionName.caBundle.variable)); check the system clock"))
            case .connectionRefused:
                return unreachable(shown, "refused the connection", "check the endpoint URL and that the server is running")
            case .dnsFailure:
                return unreachable(shown, "cannot be resolved (\(error.message))", "check the endpoint's host name")
            case .timeout:
                return unreachable(
                    shown, "did not answer within \(connectTimeoutSeconds) s",
                    "check the endpoint URL, the network and any firewall or proxy")
            default:
                return unreachable(shown, "cannot be reached: \(error.message)", "check the endpoint URL and the network")
            }
        } catch {
            return unreachable(shown, "cannot be reached: \(error)", "check the endpoint URL and the network")
        }
    }

    private func unreachable(_ endpoint: String, _ problem: String, _ advice: String) -> Probe {
        Probe(
            endpoint: .fail(.endpoint, "\(endpoint) is unreachable: it \(problem)", advice),
            tls: .skipped(.tls, because: .endpoint))
    }

    /// The server's clock against ours, from a reply's `Date` header.
    func clockCheck(_ response: HTTPResponse) -> DoctorCheck {
        guard let text = response.header("date"), let server = HTTPDate.parse(text) else {
            return .warning(.clock, "the server sent no Date header, so the clock cannot be compared", nil)
        }
        return Self.clockCheck(offset: server.timeIntervalSince(response.receivedAt))
    }

    /// `offset` is the server's time minus ours, in seconds. HTTP dates have whole seconds,
    /// so an offset within one second is reported as 0.
    static func clockCheck(offset: TimeInterval) -> DoctorCheck {
        let seconds = abs(offset) < 1 ? 0 : Int(offset.rounded())
        let signed = seconds > 0 ? "+\(seconds)" : "\(seconds)"
        if abs(offset) > skewWarningSeconds {
            let direction = seconds > 0 ? "behind" : "ahead of"
            return .warning(
                .clock, "this clock is \(abs(seconds)) s \(direction) the server's (offset \(signed) s)",
                "r2up corrects for it, but other tools will fail: synchronise the clock (NTP)")
        }
        return .pass(.clock, "offset \(signed) s from the server's Date header")
    }

    // MARK: - Bucket and write

    /// ListObjectsV2 with max-keys 1: what object-scoped tokens (R2) may call, unlike HeadBucket.
    func bucketCheck(_ client: S3Client, bucket: String) async -> DoctorCheck {
        do {
            _ = try await client.listObjects(bucket: bucket, maxKeys: 1)
            return .pass(.bucket, "'\(bucket)' exists and the credentials can list it")
        } catch .service(let failure) where failure.code == "AccessDenied" {
            // A token that may write but not list: push works, ls does not. Tell them apart
            // from a missing bucket, which some servers also answer with AccessDenied.
            if case .service(let head)? = await client.headBucketFailure(bucket), head.status == 404 {
                return Self.failure(.bucket, .service(head), bucket: bucket)
            }
            return .warning(
                .bucket, "the credentials may not list '\(bucket)' (AccessDenied)",
                "push works if they may write; ls and sync's checks need List permission")
        } catch {
            return Self.failure(.bucket, error, bucket: bucket)
        }
    }

    /// PUT a small probe object, HEAD it, DELETE it, and HEAD again to see it gone.
    func writeCheck(_ client: S3Client, bucket: String, whileStored: () async -> Void = {}) async -> DoctorCheck {
        let body = Array("r2up doctor probe; safe to delete\n".utf8)
        do {
            _ = try await client.putObject(bucket: bucket, key: probeKey, body: .bytes(body), checksum: nil)
        } catch {
            return Self.failure(.write, error, bucket: bucket, action: "write")
        }
        do {
            guard let info = try await client.headObject(bucket: bucket, key: probeKey), info.size == Int64(body.count)
            else {
                _ = try? await client.deleteObject(bucket: bucket, key: probeKey)
                return .fail(
                    .write, "the probe object \(probeKey) was written but cannot be read back whole",
                    "the server does not keep what it accepts; check its storage")
            }
            await whileStored()
            try await client.deleteObject(bucket: bucket, key: probeKey)
        } catch {
            var check = Self.failure(.write, error, bucket: bucket, action: "delete")
            check.detail += " (the probe object \(probeKey) may be left; delete it)"
            return check
        }
        do {
            if try await client.headObject(bucket: bucket, key: probeKey) != nil {
                return .fail(
                    .write, "the probe object \(probeKey) is still there after DELETE",
                    "the credentials may not delete; delete it by hand")
            }
        } catch {
            return Self.failure(.write, error, bucket: bucket, action: "check")
        }
        return .pass(.write, "wrote, read back and deleted \(probeKey)")
    }

    /// GETs the probe object, unsigned, through the URL `push` prints for it: what a listener's
    /// browser does. When that does not serve it, says why: the S3 API endpoint as the base
    /// (it needs signed requests), public access not enabled, a base missing the bucket's path
    /// (or holding it where the domain serves the bucket at its root), or a wrong base.
    func publicURLCheck(_ settings: Settings, endpoint: S3Endpoint, bucket: String, engine: TransferEngine) async -> DoctorCheck {
        let base = settings.publicURL?.value
        let url = PublicURL.make(key: probeKey, bucket: bucket, publicBase: base, endpoint: endpoint)
        let status = await fetchStatus(url, engine: engine)
        if status == 200 { return .pass(.publicURL, "fetched the probe through \(url) without credentials") }
        guard let status else {
            return .fail(.publicURL, "\(url) cannot be reached", "check \(OptionName.publicURL.variable) (\(OptionName.publicURL.option)): its host does not answer")
        }
        var trimmed = base ?? ""
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let base, !trimmed.isEmpty else {
            return .fail(
                .publicURL, "no public URL base is set, and the S3 endpoint does not serve \(url) without a signature (HTTP \(status))",
                "enable public access on the bucket (R2: its r2.dev subdomain or a custom domain) and set \(OptionName.publicURL.variable) or \(OptionName.publicURL.option) to it")
        }
        let parsed = URL(string: trimmed)
        let authority = (parsed?.host ?? "") + (parsed?.port.map { ":\($0)" } ?? "")
        let apiHost = authority == endpoint.authority(bucket: nil) || parsed?.host?.hasSuffix(".r2.cloudflarestorage.com") == true
        if (status == 401 || status == 403) && apiHost {
            return .fail(
                .publicURL, "the public URL base \(base) is the S3 API endpoint, which answers HTTP \(status) to an unsigned GET",
                "set \(OptionName.publicURL.variable) to the bucket's public domain (R2: the r2.dev subdomain or a custom domain)")
        }
        if status == 401 || status == 403 {
            return .fail(
                .publicURL, "\(url) answered HTTP \(status): public access is not enabled for the bucket",
                "enable public access (R2: Settings → Public access: the r2.dev subdomain or a custom domain) or allow anonymous reads")
        }
        // A base that lacks the bucket's path, or holds it where the domain serves the bucket itself.
        let withBucket = trimmed + "/" + PublicURL.encode(bucket) + "/" + PublicURL.encode(probeKey)
        if await fetchStatus(withBucket, engine: engine) == 200 {
            return .fail(
                .publicURL, "\(url) answered HTTP \(status), but \(withBucket) serves it: the base lacks the bucket's path",
                "set \(OptionName.publicURL.variable) to \(trimmed)/\(bucket)")
        }
        if trimmed.hasSuffix("/" + bucket) {
            let root = String(trimmed.dropLast(bucket.count + 1))
            if await fetchStatus(root + "/" + PublicURL.encode(probeKey), engine: engine) == 200 {
                return .fail(
                    .publicURL, "\(url) answered HTTP \(status), but \(root) serves the bucket at its root",
                    "set \(OptionName.publicURL.variable) to \(root)")
            }
        }
        return .fail(
            .publicURL, "\(url) answered HTTP \(status): the public URL base \(base) does not serve this bucket",
            "check \(OptionName.publicURL.variable) (\(OptionName.publicURL.option)): the bucket's public domain, with the bucket's path when it serves several")
    }

    /// The status of an unsigned GET, or nil when nothing answered.
    private func fetchStatus(_ url: String, engine: TransferEngine) async -> Int? {
        do {
            return try await engine.perform(HTTPRequest(method: "GET", url: url, sink: .memory(limit: 1 << 20))).status
        } catch {
            return nil
        }
    }

    /// A failed S3 call as a check line: the problem, then what to do.
    static func failure(
        _ kind: DoctorCheck.Kind, _ error: S3ClientError, bucket: String, action: String = "list"
    ) -> DoctorCheck {
        switch error {
        case .service(let failure):
            switch failure.code {
            case "InvalidAccessKeyId":
                return .fail(
                    kind, "the server does not know the access key id (InvalidAccessKeyId)",
                    "check \(OptionName.accessKeyID.variable) or the profile's aws_access_key_id")
            case "SignatureDoesNotMatch":
                return .fail(
                    kind, "the server computed another signature (SignatureDoesNotMatch)",
                    "the secret access key is wrong (check \(OptionName.secretAccessKey.variable) or the profile's aws_secret_access_key), or something between r2up and the server rewrote the request")
            case "NoSuchBucket":
                return .fail(
                    kind, "the bucket '\(bucket)' does not exist (NoSuchBucket)",
                    "check \(OptionName.bucket.option), \(OptionName.bucket.variable) or the profile's bucket, or create it")
            case "AccessDenied":
                return .fail(
                    kind, "the credentials may not \(action) in '\(bucket)' (AccessDenied)",
                    "give the token Object Read & Write on this bucket")
            case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
                return .fail(kind, "the session token is expired or invalid (\(failure.code))", "get new credentials")
            case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException":
                return .fail(kind, "the server rejected the region (\(failure.code))", "check \(OptionName.region.sources)")
            default:
                return .fail(kind, "the server answered \(failure.description)", nil)
            }
        case .transfer(let failure):
            return .fail(kind, "the request failed: \(failure.message)", "check the network and run doctor again")
        case .unexpectedResponse(let text):
            return .fail(kind, "the endpoint does not answer like S3: \(text)", "check the endpoint URL")
        }
    }

    // MARK: - Local


    /// Opens the database (upgrading it as every command does) and names its schema; a
    /// database not made yet is fine when its folder can be made and written.
    func databaseCheck(_ path: String) -> DoctorCheck {
        guard FileManager.default.fileExists(atPath: path) else {
            var folder = (path as NSString).deletingLastPathComponent
            while !folder.isEmpty && folder != "/" && !FileManager.default.fileExists(atPath: folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
            if folder.isEmpty { folder = "." }
            guard access(folder, W_OK | X_OK) == 0 else {
                return .fail(
                    .database, "\(path) does not exist and \(folder) cannot be written",
                    "use \(OptionName.database.sources) for a writable place")
            }
            return .pass(.database, "\(path) is not created yet; the first upload creates it")
        }
        do {
            let store = try Store(path: path)
            let migrations = try store.appliedMigrations()
            let uploads = try store.uploadCount()
            return .pass(
                .database,
                "\(path) opens, schema \(migrations.last ?? "none") (\(migrations.count) migrations), \(uploads) upload\(uploads == 1 ? "" : "s") in history"
            )
        } catch {
            return .fail(.database, error.description, "use \(OptionName.database.option) for another file, or move this one away")
        }
    }
}
