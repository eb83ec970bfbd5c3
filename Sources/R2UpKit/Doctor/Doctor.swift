package import Foundation
import SigV4
package import R2UpModel
import R2UpStore
import R2UpTransfer

/// `r2up doctor`: checks, in order, that the settings resolve, credentials are there, the
/// endpoint answers (over verified TLS for https), the bucket exists, an object can be
/// written and deleted, the clock agrees with the server's, a clipboard tool is there and
/// the database opens. A check whose prerequisite failed is reported as skipped.
///
/// Nothing here prints; each result goes to `report` as soon as it is known, so a slow
/// endpoint does not hold back the lines before it. No result holds a secret.
package struct Doctor: Sendable {
    /// The settings, or why they could not be resolved.
    package var settings: Result<Settings, ConfigurationError>
    /// The files the settings may come from, in the order they are read.
    package var configFiles: [String]
    /// The front end's own local check (the CLI's clipboard tool for copy-url), run in the
    /// place the clipboard check has in the list; nil: there is none.
    package var clipboardCheck: (@Sendable () -> DoctorCheck)?
    /// Mask with `...` rather than `…`.
    package var ascii: Bool
    /// The probe object's key.
    package var probeKey: String
    /// Give up connecting after this long.
    package var connectTimeoutSeconds = 10

    /// The clock skew over which doctor warns (S3 refuses requests 15 minutes off).
    package static let skewWarningSeconds: TimeInterval = 300

    package init(
        settings: Result<Settings, ConfigurationError>, configFiles: [String],
        ascii: Bool = false,
        probeKey: String = ".r2up-doctor/probe-\(UUID().uuidString.lowercased())",
        clipboardCheck: (@Sendable () -> DoctorCheck)? = nil
    ) {
        self.clipboardCheck = clipboardCheck
        self.settings = settings
        self.configFiles = configFiles
        self.ascii = ascii
        self.probeKey = probeKey
    }

    /// Runs every check, handing each result to `report` as it is known.
    package func run(report: @Sendable (DoctorCheck) -> Void = { _ in }) async -> DoctorReport {
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
        if reachable {
            await bucketChecks(settings, endpoint: endpoint, engine: engine, record: record)
        } else {
            for kind in [DoctorCheck.Kind.bucket, .write, .publicURL] { record(.skipped(kind, because: blocker)) }
        }

        record(probe.clock ?? .skipped(.clock, because: blocker))
        if let clipboardCheck { record(clipboardCheck()) }
        record(databaseCheck(settings.database.value))
        return DoctorReport(checks: checks)
    }

    /// The bucket, write and public URL checks, once the endpoint answered.
    private func bucketChecks(
        _ settings: Settings, endpoint: S3Endpoint, engine: TransferEngine, record: (DoctorCheck) -> Void
    ) async {
        guard let credentials = settings.credentials?.value else {
            for kind in [DoctorCheck.Kind.bucket, .write, .publicURL] { record(.skipped(kind, because: .credentials)) }
            return
        }
        guard let bucket = settings.bucket?.value, !bucket.isEmpty else {
            record(.fail(.bucket, "no bucket is set", "\(Remedy.runConfigInit), or use \(OptionName.bucket.sources)"))
            record(.skipped(.write, because: .bucket))
            record(.skipped(.publicURL, because: .bucket))
            return
        }
        let client = S3Client(endpoint: endpoint, region: settings.region.value, credentials: credentials, engine: engine)
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
    }
}
