import Foundation
import SigV4
import Testing
import R2UpTransfer
@testable import R2UpKit
@testable import R2UpModel
import R2UpTestSupport
@testable import r2up

/// SettingsResolver's precedence (DESIGN §2): flags > environment > r2up config > ~/.aws/credentials
/// > ~/.aws/config, with every file written into a temporary HOME; the environment as the CLI
/// reads it (Sources/r2up/EnvironmentSettings.swift).
@Suite("Settings resolution")
struct SettingsTests {
    /// A temporary HOME with the three config files r2up reads.
    final class Home {
        let directory: TestDirectory
        var path: String { directory.path }
        var r2upConfig: String { path + "/.config/r2up/config" }
        var awsCredentials: String { path + "/.aws/credentials" }
        var awsConfig: String { path + "/.aws/config" }

        init(r2up: String? = nil, credentials: String? = nil, config: String? = nil) throws {
            directory = try TestDirectory()
            for (file, text) in [(r2upConfig, r2up), (awsCredentials, credentials), (awsConfig, config)] {
                guard let text else { continue }
                try Self.write(text, to: file, mode: 0o600)
            }
        }

        static func write(_ text: String, to file: String, mode: mode_t) throws {
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, mode)
        }

        func resolve(_ environment: [String: String] = [:], flags: SettingOverrides = .init()) throws(ConfigurationError) -> Settings {
            var env = environment
            env["HOME"] = path
            return try SettingsResolver(environment: env, homeDirectory: path).resolve(flags)
        }
    }

    /// One row: which sources carry an endpoint, and which one must win.
    struct EndpointCase: Sendable, CustomTestStringConvertible {
        var flag: Bool
        var environment: Bool
        var r2up: Bool
        var credentials: Bool
        var config: Bool
        var winner: String
        var testDescription: String { "winner \(winner)" }
    }

    static let endpointCases: [EndpointCase] = [
        .init(flag: true, environment: true, r2up: true, credentials: true, config: true, winner: "flag"),
        .init(flag: false, environment: true, r2up: true, credentials: true, config: true, winner: "env"),
        .init(flag: false, environment: false, r2up: true, credentials: true, config: true, winner: "r2up"),
        .init(flag: false, environment: false, r2up: false, credentials: true, config: true, winner: "credentials"),
        .init(flag: false, environment: false, r2up: false, credentials: false, config: true, winner: "config"),
        .init(flag: true, environment: false, r2up: false, credentials: false, config: true, winner: "flag"),
        .init(flag: false, environment: true, r2up: false, credentials: false, config: true, winner: "env"),
    ]

    static func url(_ source: String) -> String { "https://\(source).example.com" }

    @Test("the endpoint comes from the highest source that has one", arguments: endpointCases)
    func endpointPrecedence(row: EndpointCase) throws {
        let home = try Home(
            r2up: row.r2up ? "[default]\nendpoint_url = \(Self.url("r2up"))\nregion = r2up-region\n" : nil,
            credentials: row.credentials ? "[default]\nendpoint_url = \(Self.url("credentials"))\nregion = cred-region\n" : nil,
            config: row.config ? "[default]\nendpoint_url = \(Self.url("config"))\nregion = config-region\n" : nil)
        var flags = SettingOverrides()
        if row.flag { flags.endpoint = Self.url("flag") }
        let settings = try home.resolve(row.environment ? ["R2UP_ENDPOINT": Self.url("env")] : [:], flags: flags)
        #expect(settings.endpoint?.value == Self.url(row.winner))
        let expectedSource: SettingSource =
            switch row.winner {
            case "flag": .flag(.endpoint)
            case "env": .environment("R2UP_ENDPOINT")
            case "r2up": .file(path: home.r2upConfig, profile: "default")
            case "credentials": .file(path: home.awsCredentials, profile: "default")
            default: .file(path: home.awsConfig, profile: "default")
            }
        #expect(settings.endpoint?.source == expectedSource)
        // Region follows the same file order.
        let region = row.r2up ? "r2up-region" : row.credentials ? "cred-region" : "config-region"
        #expect(settings.region.value == region)
    }

    @Test("environment endpoint variables: R2UP_ENDPOINT, then AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL")
    func environmentEndpointOrder() throws {
        let home = try Home()
        let all = ["R2UP_ENDPOINT": "https://a.test", "AWS_ENDPOINT_URL_S3": "https://b.test", "AWS_ENDPOINT_URL": "https://c.test"]
        #expect(try home.resolve(all).endpoint?.value == "https://a.test")
        #expect(try home.resolve(all.filter { $0.key != "R2UP_ENDPOINT" }).endpoint?.value == "https://b.test")
        #expect(try home.resolve(["AWS_ENDPOINT_URL": "https://c.test"]).endpoint?.source == .environment("AWS_ENDPOINT_URL"))
        #expect(try home.resolve().endpoint == nil)
        #expect(throws: ConfigurationError.missingEndpoint) { try home.resolve().requireEndpoint() }
    }

    @Test("R2_ACCOUNT_ID gives the account's R2 endpoint and region auto")
    func r2AccountID() throws {
        let home = try Home()
        let settings = try home.resolve(["R2_ACCOUNT_ID": "0123abcd"])
        #expect(settings.endpoint?.value == "https://0123abcd.r2.cloudflarestorage.com")
        #expect(settings.endpoint?.source == .environment("R2_ACCOUNT_ID"))
        #expect(settings.region == Sourced(value: "auto", source: .builtIn))
        let endpoint = try settings.requireEndpoint()
        #expect(endpoint.isR2)
        #expect(endpoint.addressing == .pathStyle)
        // An explicit endpoint beats the account id; an explicit region beats auto.
        let both = try home.resolve(["R2_ACCOUNT_ID": "0123abcd", "R2UP_ENDPOINT": "http://127.0.0.1:9000", "AWS_REGION": "eu"])
        #expect(both.endpoint?.value == "http://127.0.0.1:9000")
        #expect(both.region == Sourced(value: "eu", source: .environment("AWS_REGION")))
        // Any other endpoint defaults to us-east-1.
        #expect(try home.resolve(["R2UP_ENDPOINT": "http://127.0.0.1:9000"]).region.value == "us-east-1")
    }

    @Test("AWS_PROFILE selects [profile NAME] in ~/.aws/config and [NAME] in credentials")
    func namedProfile() throws {
        let home = try Home(
            credentials: """
                [default]
                aws_access_key_id = DEFAULTKEY
                aws_secret_access_key = defaultsecret

                [work]
                aws_access_key_id = WORKKEY
                aws_secret_access_key = worksecret
                """,
            config: """
                [default]
                region = default-region
                endpoint_url = https://default.example.com

                [profile work]
                region = work-region
                endpoint_url = https://work.example.com
                bucket = work-bucket
                """)
        let work = try home.resolve(["AWS_PROFILE": "work"])
        #expect(work.profile == Sourced(value: "work", source: .environment("AWS_PROFILE")))
        #expect(work.credentials?.value == Credentials(accessKeyID: "WORKKEY", secretAccessKey: "worksecret"))
        #expect(work.credentials?.source == .file(path: home.awsCredentials, profile: "work"))
        #expect(work.region == Sourced(value: "work-region", source: .file(path: home.awsConfig, profile: "work")))
        #expect(work.endpoint?.value == "https://work.example.com")
        #expect(work.bucket?.value == "work-bucket")

        let standard = try home.resolve()
        #expect(standard.profile == Sourced(value: "default", source: .builtIn))
        #expect(standard.credentials?.value.accessKeyID == "DEFAULTKEY")
        #expect(standard.region.value == "default-region")
        #expect(standard.bucket == nil)

        // --profile beats AWS_PROFILE; environment keys beat the file's.
        var flags = SettingOverrides()
        flags.profile = "default"
        #expect(try home.resolve(["AWS_PROFILE": "work"], flags: flags).credentials?.value.accessKeyID == "DEFAULTKEY")
        let envKeys = try home.resolve(["AWS_PROFILE": "work", "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret"])
        #expect(envKeys.credentials?.value == Credentials(accessKeyID: "ENVKEY", secretAccessKey: "envsecret"))
        #expect(envKeys.credentials?.source == .environment("AWS_ACCESS_KEY_ID"))
    }

    @Test("files with CRLF line ends (Windows) read like LF ones; found by fuzzing")
    func crlfLineEnds() throws {
        let home = try Home(
            credentials: "[default]\r\naws_access_key_id = CRLFKEY\r\naws_secret_access_key = crlfsecret\r\n",
            config: "[default]\r\nregion = crlf-region\r\nendpoint_url = https://crlf.example.com\r\n")
        let settings = try home.resolve()
        #expect(settings.credentials?.value == Credentials(accessKeyID: "CRLFKEY", secretAccessKey: "crlfsecret"))
        #expect(settings.region.value == "crlf-region")
        #expect(settings.endpoint?.value == "https://crlf.example.com")
    }

    @Test("an explicit profile that no file has is an error")
    func unknownProfile() throws {
        let home = try Home(credentials: "[default]\naws_access_key_id = K\naws_secret_access_key = S\n", config: "[profile work]\nregion = x\n")
        #expect(throws: ConfigurationError.unknownProfile("nope")) { try home.resolve(["AWS_PROFILE": "nope"]) }
        var flags = SettingOverrides()
        flags.profile = "missing"
        #expect(throws: ConfigurationError.unknownProfile("missing")) { try home.resolve(flags: flags) }
        // "[work]" in ~/.aws/config is not "[profile work]", but a profile found anywhere is known.
        #expect(try home.resolve(["AWS_PROFILE": "work"]).region.value == "x")
        // With no files at all, the implicit default profile is not an error.
        #expect(try Home().resolve().profile.value == "default")
    }

    @Test("a line that is not INI names its file and line")
    func syntaxError() throws {
        let home = try Home(config: "# comment\n[default]\nregion = eu\nthis line has no equals sign\n")
        #expect(throws: ConfigurationError.invalidFile(path: home.awsConfig, line: 4, reason: "expected 'key = value'")) {
            try home.resolve()
        }
        let header = try Home(credentials: "\n\n[default\n")
        #expect(
            throws: ConfigurationError.invalidFile(
                path: header.awsCredentials, line: 3, reason: "a section header must look like [name]")
        ) { try header.resolve() }
        let orphan = try Home(r2up: "bucket = b\n[default]\n")
        #expect(
            throws: ConfigurationError.invalidFile(path: orphan.r2upConfig, line: 1, reason: "a setting before any [section]")
        ) { try orphan.resolve() }
    }

    @Test("a credentials file others can read gives a warning; mode 600 gives none")
    func permissionWarning() throws {
        let text = "[default]\naws_access_key_id = K\naws_secret_access_key = S\n"
        let home = try Home(credentials: text)
        #expect(try home.resolve().warnings == [])
        chmod(home.awsCredentials, 0o644)
        let settings = try home.resolve()
        #expect(
            settings.warnings == [
                "warning: \(home.awsCredentials) is readable by other users; run: chmod 600 \(home.awsCredentials)"
            ])
        #expect(settings.filesRead == [home.awsCredentials])
        // ~/.aws/config holds no secrets, so its mode does not matter.
        let config = try Home(config: "[default]\nregion = eu\n")
        chmod(config.awsConfig, 0o644)
        #expect(try config.resolve().warnings == [])
    }

    @Test("credentials never show their secret or token, however they are printed")
    func secretNeverPrinted() throws {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        let token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
        let home = try Home(
            credentials: "[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = \(secret)\naws_session_token = \(token)\n")
        let settings = try home.resolve(["R2UP_ENDPOINT": "https://e.example.com"])
        let credentials = try settings.requireCredentials()
        #expect(credentials.secretAccessKey == secret)
        #expect(credentials.sessionToken == token)
        var dumped = ""
        dump(settings, to: &dumped)
        for text in [
            credentials.description, String(reflecting: credentials), "\(credentials)", String(describing: settings),
            String(reflecting: settings), dumped,
        ] {
            #expect(!text.contains(secret), "leaked in: \(text)")
            #expect(!text.contains(token), "leaked in: \(text)")
        }
        #expect(credentials.description == "Credentials(accessKeyID: AKIDEXAMPLE, secretAccessKey: <redacted>, sessionToken: <redacted>)")
    }

    @Test("flags beat the environment and files for bucket, public URL, region and database")
    func otherSettingsPrecedence() throws {
        let home = try Home(r2up: "[default]\nbucket = file-bucket\npublic_url = https://file.example\naddressing_style = virtual\n")
        let fromFile = try home.resolve()
        #expect(fromFile.bucket?.value == "file-bucket")
        #expect(fromFile.publicURL?.value == "https://file.example")
        #expect(fromFile.addressing.value == .virtualHosted)
        #expect(fromFile.database == Sourced(value: home.path + "/.local/share/r2up/r2up.sqlite", source: .builtIn))

        let env = ["R2UP_BUCKET": "env-bucket", "R2UP_PUBLIC_URL": "https://env.example", "R2UP_DB": "/tmp/env.sqlite", "AWS_DEFAULT_REGION": "env-region"]
        let fromEnv = try home.resolve(env)
        #expect(fromEnv.bucket == Sourced(value: "env-bucket", source: .environment("R2UP_BUCKET")))
        #expect(fromEnv.publicURL?.value == "https://env.example")
        #expect(fromEnv.database.value == "/tmp/env.sqlite")
        #expect(fromEnv.region == Sourced(value: "env-region", source: .environment("AWS_DEFAULT_REGION")))

        var flags = SettingOverrides()
        flags.bucket = "flag-bucket"
        flags.publicURL = "https://flag.example"
        flags.database = "/tmp/flag.sqlite"
        flags.region = "flag-region"
        flags.addressing = .pathStyle
        let fromFlags = try home.resolve(env, flags: flags)
        #expect(fromFlags.bucket == Sourced(value: "flag-bucket", source: .flag(.bucket)))
        #expect(fromFlags.publicURL?.value == "https://flag.example")
        #expect(fromFlags.database.value == "/tmp/flag.sqlite")
        #expect(fromFlags.region == Sourced(value: "flag-region", source: .flag(.region)))
        #expect(fromFlags.addressing == Sourced(value: .pathStyle, source: .flag(.pathStyle)))
    }

    @Test("an endpoint that is not an http(s) URL is rejected wherever it came from")
    func invalidEndpoint() throws {
        let home = try Home(config: "[default]\nendpoint_url = ftp://files.example.com\n")
        #expect(throws: ConfigurationError.invalidEndpoint("ftp://files.example.com", source: "\(home.awsConfig) [default]")) {
            try home.resolve()
        }
        var flags = SettingOverrides()
        flags.endpoint = "not a url"
        #expect(throws: ConfigurationError.invalidEndpoint("not a url", source: "\(SettingSource.flag(.endpoint))")) { try home.resolve(flags: flags) }
    }
}

/// Issue 15's settings rules (moved from HardeningTests with the environment's names).
extension SettingsTests {
    @Test("--profile takes endpoint, credentials, bucket and public URL from the profile over the environment")
    func explicitProfileWins() throws {
        let home = try Home(
            r2up: """
                [work]
                endpoint_url = http://work.example:9000
                aws_access_key_id = WORKKEY
                aws_secret_access_key = worksecret
                bucket = work-bucket
                public_url = https://work.example
                """)
        let env = [
            "R2UP_ENDPOINT": "http://env.example:9000", "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret",
            "R2UP_BUCKET": "env-bucket", "R2UP_PUBLIC_URL": "https://env.example",
        ]
        var flags = SettingOverrides()
        flags.profile = "work"
        let settings = try home.resolve(env, flags: flags)
        let file = SettingSource.file(path: home.r2upConfig, profile: "work")
        #expect(settings.endpoint == Sourced(value: "http://work.example:9000", source: file))
        #expect(settings.credentials?.value == Credentials(accessKeyID: "WORKKEY", secretAccessKey: "worksecret"))
        #expect(settings.bucket == Sourced(value: "work-bucket", source: file))
        #expect(settings.publicURL == Sourced(value: "https://work.example", source: file))
        #expect(settings.outrankedByProfile == [
            "R2UP_ENDPOINT", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "R2UP_BUCKET", "R2UP_PUBLIC_URL",
        ])
        let report = SettingsReport(settings: settings, resolver: SettingsResolver(environment: env, homeDirectory: home.path))
        // The library's words for the option (the CLI's, `--profile work: …`, are ConfigDoctorCommandTests').
        #expect(report.profileNote
            == "the profile option work: the profile's settings win over R2UP_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, R2UP_BUCKET, R2UP_PUBLIC_URL from the environment")
        #expect(report.lines.contains(report.profileNote ?? "-"))

        // AWS_PROFILE names the profile too, but the environment's own values still win then.
        var viaEnv = env
        viaEnv["AWS_PROFILE"] = "work"
        let environmentFirst = try home.resolve(viaEnv)
        #expect(environmentFirst.bucket?.value == "env-bucket")
        #expect(environmentFirst.outrankedByProfile.isEmpty)
    }

    @Test("a configured public URL stays with its bucket: another --bucket gets path-style URLs and a note")
    func publicURLBelongsToItsBucket() throws {
        let home = try Home(r2up: "[default]\nbucket = music\npublic_url = https://cdn.example.com/\nendpoint_url = http://127.0.0.1:8333\n")
        var flags = SettingOverrides()
        flags.bucket = "other"
        let other = try home.resolve(flags: flags)
        #expect(other.publicURL == nil)
        #expect(other.warnings == [
            "warning: the public URL https://cdn.example.com belongs to bucket 'music'; URLs for 'other' are path-style (pass the public URL option to set its own)",
        ])
        flags.bucket = "music"
        let same = try home.resolve(flags: flags)
        #expect(same.publicURL?.value == "https://cdn.example.com")
        #expect(same.warnings.isEmpty)
        flags.bucket = "other"
        flags.publicURL = "https://other.example.com"
        #expect(try home.resolve(flags: flags).publicURL?.value == "https://other.example.com")
    }

    @Test("a public URL on the endpoint names its bucket: R2UP_BUCKET changed with R2UP_PUBLIC_URL kept gets path-style URLs and a note")
    func publicURLOnTheEndpointNamesItsBucket() throws {
        let home = try Home()
        var env = ["R2UP_ENDPOINT": "http://127.0.0.1:8333", "R2UP_PUBLIC_URL": "http://127.0.0.1:8333/music", "R2UP_BUCKET": "other"]
        let other = try home.resolve(env)
        #expect(other.publicURL == nil)
        #expect(other.warnings == [
            "warning: the public URL http://127.0.0.1:8333/music is bucket 'music' on the endpoint; URLs for 'other' are path-style (pass the public URL option to set its own)",
        ])
        env["R2UP_BUCKET"] = "music"
        let same = try home.resolve(env)
        #expect(same.publicURL?.value == "http://127.0.0.1:8333/music" && same.warnings.isEmpty)
        // A base elsewhere (R2's r2.dev, a CDN) names no bucket r2up can read.
        env["R2UP_BUCKET"] = "other"
        env["R2UP_PUBLIC_URL"] = "http://127.0.0.1:9000/music"
        #expect(try home.resolve(env).publicURL?.value == "http://127.0.0.1:9000/music")
    }

    @Test("a bad public URL or region in a file is a configuration error naming its source; a bad bucket when needed")
    func badSettingsInFiles() throws {
        let home = try Home(r2up: "[default]\npublic_url = cdn.example.com\n")
        #expect(throws: ConfigurationError.invalidValue(
            setting: "the public URL (\(home.r2upConfig) [default])", value: "cdn.example.com",
            reason: "it has no scheme; give it as https://cdn.example.com")) { try home.resolve() }
        let bucket = try Home(r2up: "[default]\nbucket = Bad_Bucket\n").resolve()
        #expect(throws: ConfigurationError.self) { try bucket.requireBucket() }
        let region = try Home()
        #expect(throws: ConfigurationError.self) { try region.resolve(["AWS_REGION": "us-east-1\r\nX: y"]) }
    }
}
