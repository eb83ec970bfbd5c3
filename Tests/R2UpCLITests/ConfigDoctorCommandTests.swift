import Foundation
import Testing

/// `r2up config init`, `config show` and `doctor`, run as a user would, against the real server.
@Suite("r2up config and doctor", .serialized)
struct ConfigDoctorCommandTests {
    /// An environment with no S3 settings: everything must come from the config file.
    static func bare(_ folder: borrowing TemporaryFolder) -> [String: String] {
        var env = CLI.environment(home: folder.path)
        env["XDG_CONFIG_HOME"] = folder.path + "/xdg"
        env["R2UP_DB"] = folder.path + "/db.sqlite"
        return env
    }

    /// Keys that start as the doctor's probe does, and folders so named at the top of the bucket
    /// (SeaweedFS keeps an emptied folder, which `ls` shows), listed by boto3.
    static func probeObjects() async throws -> [String] {
        let script = """
            import boto3, os
            e = os.environ
            s3 = boto3.client("s3", endpoint_url=e["R2UP_TEST_ENDPOINT"], aws_access_key_id=e["R2UP_TEST_ACCESS_KEY"],
                              aws_secret_access_key=e["R2UP_TEST_SECRET_KEY"], region_name="us-east-1")
            # The top level, not Prefix=".r2up-doctor": SeaweedFS lists an empty folder only there.
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=e["R2UP_TEST_BUCKET"], Delimiter="/"):
                names = [o["Key"] for o in page.get("Contents", [])] + [p["Prefix"] for p in page.get("CommonPrefixes", [])]
                for name in names:
                    if name.startswith(".r2up-doctor"): print(name)
            """
        let result = try await ProcessRunner.run(
            "/usr/bin/env", ["python3", "-c", script], environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else { throw HarnessError("boto3 list failed: \(result.stderr)") }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("config init from piped answers writes a 0600 profile; config show names sources and never the secret")
    func initAndShow() async throws {
        let folder = try TemporaryFolder()
        let env = Self.bare(folder)
        let secret = "Zq8+secret/Value-0123456789abcdefghijkl"
        let first = try await CLI.run(
            ["config", "init"], environment: env,
            input: "0123456789abcdef0123456789abcdef\nAKIAIOSFODNN7EXAMPLE\n\(secret)\nmusic\nhttps://cdn.example.com\n\n")
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let path = folder.path + "/xdg/r2up/config"
        #expect(first.stdout.hasPrefix("Wrote profile 'default' to \(path) (mode 0600)."))
        // Questions go to stderr, one per line when piped; the secret is never echoed.
        #expect(first.stderr.hasPrefix("Endpoint URL or R2 account id:\nAccess key id:\nSecret access key:\nBucket:\n"))
        #expect(!first.stderr.contains(secret) && !first.stdout.contains(secret))

        let second = try await CLI.run(
            ["config", "init", "--profile", "local"], environment: env,
            input: "http://127.0.0.1:8333\nlocalkey\nlocalsecret\nscratch\n")
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == """
            [default]
            endpoint_url = https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com
            region = auto
            bucket = music
            public_url = https://cdn.example.com
            aws_access_key_id = AKIAIOSFODNN7EXAMPLE
            aws_secret_access_key = \(secret)

            [local]
            endpoint_url = http://127.0.0.1:8333
            region = us-east-1
            bucket = scratch
            aws_access_key_id = localkey
            aws_secret_access_key = localsecret

            """)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(folder.path + "/xdg/r2up", &info) == 0 && info.st_mode & 0o777 == 0o700)

        let show = try await CLI.run(["config", "show"], environment: env)
        #expect(show.status == 0, "stderr: \(show.stderr)")
        let lines = show.stdout.split(separator: "\n").map(String.init)
        let source = "\(path) [default]"
        #expect(lines.contains("region             auto                                                               \(source)"))
        #expect(lines.contains { $0.hasPrefix("access key id      AKIA…MPLE ") && $0.hasSuffix(source) })
        #expect(lines.contains { $0.hasPrefix("secret access key  set (39 characters) ") && $0.hasSuffix(source) })
        #expect(lines.contains { $0.hasPrefix("bucket             music ") })

        var flagged = env
        flagged["R2UP_BUCKET"] = "from-env"
        let json = try await CLI.run(["config", "show", "--json", "--profile", "local", "--region", "eu-west-1"], environment: flagged)
        #expect(json.status == 0, "stderr: \(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [[String: Any]])
        let rows = Dictionary(uniqueKeysWithValues: settings.map { ($0["id"] as! String, $0) })
        #expect(rows["region"]?["value"] as? String == "eu-west-1" && rows["region"]?["source"] as? String == "flag --region")
        // An explicit --profile outranks the environment (as the AWS CLI's does), and says so.
        #expect(rows["bucket"]?["value"] as? String == "scratch" && rows["bucket"]?["source"] as? String == "\(path) [local]")
        #expect(object["profileNote"] as? String == "--profile local: the profile's settings win over R2UP_BUCKET from the environment")
        #expect(rows["endpoint"]?["source"] as? String == "\(path) [local]")
        #expect(rows["publicURL"]?["value"] is NSNull)
        for output in [show.stdout, show.stderr, json.stdout, json.stderr] {
            #expect(!output.contains(secret) && !output.contains("localsecret") && !output.contains("IOSFODNN7"))
        }
    }

    @Test("config init in a terminal (tmux): prompts on one line each, the secret is not echoed")
    func initInTerminal() async throws {
        let folder = try TemporaryFolder()
        let secret = "TerminalSecret-0123456789abcdefghij"
        let script = """
            #!/bin/sh
            export HOME='\(folder.path)' XDG_CONFIG_HOME='\(folder.path)/xdg' LANG=C.UTF-8 TERM=screen
            '\(CLI.binary)' config init
            echo "INIT=$?"
            exec sleep 600

            """
        let scriptPath = folder.write("session.sh", script)
        let tmux = try await Tmux.start(width: 120, height: 20, command: "sh '\(scriptPath)'")
        defer { tmux.stop() }
        func waitFor(_ text: String) async throws -> String {
            try await tmux.screens(until: text, timeout: 30).last ?? ""
        }
        for (prompt, answer) in [
            ("Endpoint URL or R2 account id: ", "http://127.0.0.1:8333"), ("Access key id: ", "termkey"),
            ("Secret access key: ", secret), ("Bucket: ", "tunes"), ("Public URL base (optional, - for none): ", ""),
            ("Region (optional) [us-east-1]: ", ""),
        ] {
            // capture-pane drops trailing blanks: wait for the prompt without its space.
            _ = try await waitFor(String(prompt.dropLast()))
            try await tmux.type(answer)
        }
        let screen = try await waitFor("INIT=")
        #expect(screen.contains("INIT=0"), "screen:\n\(screen)")
        #expect(screen.contains("Access key id: termkey\n"), "screen:\n\(screen)")
        #expect(screen.contains("Secret access key:\nBucket: tunes\n"), "screen:\n\(screen)")
        #expect(!screen.contains(secret), "screen:\n\(screen)")
        let file = try String(contentsOfFile: folder.path + "/xdg/r2up/config", encoding: .utf8)
        #expect(file.contains("aws_secret_access_key = \(secret)\n"))
    }

    @Test("config show names each environment variable it ignored and why, in text and JSON")
    func showIgnored() async throws {
        let folder = try TemporaryFolder()
        var env = Self.bare(folder)
        env["R2UP_ENDPOINT"] = "http://127.0.0.1:9000"
        env["AWS_ENDPOINT_URL"] = "http://elsewhere.example:1"
        env["AWS_REGION"] = "eu-west-1"
        env["AWS_DEFAULT_REGION"] = "us-west-2"
        env["R2UP_BUCKET"] = ""
        env["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE12345"
        env["R2UP_PUBLIC_URL"] = "https://cdn.example.com"
        let run = try await CLI.run(["config", "show", "--public-url", "https://x.example.com"], environment: env)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = [
            "ignored from the environment:",
            "  AWS_ENDPOINT_URL: R2UP_ENDPOINT comes first",
            "  AWS_DEFAULT_REGION: AWS_REGION comes first",
            "  R2UP_BUCKET: it is set but empty",
            "  R2UP_PUBLIC_URL: flag --public-url comes first",
            "  AWS_ACCESS_KEY_ID: AWS_SECRET_ACCESS_KEY is not set, and the keys are used as a pair",
        ].joined(separator: "\n")
        #expect(run.stdout.contains("\n\n" + expected + "\n\nconfig files:\n"), "\(run.stdout)")
        let json = try await CLI.run(["config", "show", "--json"], environment: env)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any] ?? [:]
        #expect((object["ignoredEnvironment"] as? [String])?.contains("R2UP_BUCKET: it is set but empty") == true, "\(json.stdout)")

        // Nothing ignored: no such section.
        let clean = try await CLI.run(["config", "show"], environment: Self.bare(folder))
        #expect(!clean.stdout.contains("ignored"))
    }

    @Test("config init checks each answer as it is typed and asks again; the right answers are written")
    func initAsksAgain() async throws {
        let folder = try TemporaryFolder()
        let env = Self.bare(folder)
        let input = [
            "ftp://example.com", "https://s3.example.com", "key with spaces", "AKIDEXAMPLE", "", "s3cr3t-value",
            "My_Bucket", "tunes", "cdn.example.com", "https://cdn.example.com/tunes", "",
        ].joined(separator: "\n") + "\n"
        let run = try await CLI.run(["config", "init"], environment: env, input: input)
        #expect(run.status == 0, "\(run.stderr)")
        let problems = run.stderr.split(separator: "\n").filter { $0.hasPrefix("r2up: ") }
        #expect(problems == [
            "r2up: the endpoint: 'ftp://example.com' is neither an http(s) URL nor a 32-hex-digit R2 account id; try again",
            "r2up: the access key id: must not contain spaces or control characters; try again",
            "r2up: an answer is needed (the profile has none); try again",
            "r2up: the bucket: 'My_Bucket': a bucket name holds only lower-case letters, digits, '.' and '-'; try again",
            "r2up: the public URL: 'cdn.example.com': it has no scheme; give it as https://cdn.example.com; try again",
        ], "\(run.stderr)")
        #expect(!run.stderr.contains("s3cr3t-value"))
        let file = try String(contentsOfFile: folder.path + "/xdg/r2up/config", encoding: .utf8)
        #expect(file.contains("endpoint_url = https://s3.example.com\n"), "\(file)")
        #expect(file.contains("aws_access_key_id = AKIDEXAMPLE\n") && file.contains("aws_secret_access_key = s3cr3t-value\n"))
        #expect(file.contains("bucket = tunes\n") && file.contains("public_url = https://cdn.example.com/tunes\n"), "\(file)")
    }

    @Test("config init with no answers, or a bad one, exits 2 and leaves the file as it was")
    func initRefuses() async throws {
        let folder = try TemporaryFolder()
        let env = Self.bare(folder)
        let nothing = try await CLI.run(["config", "init"], environment: env)
        #expect(nothing.status == 2)
        #expect(nothing.stderr.hasSuffix(
            "r2up: config init needs answers on standard input (endpoint, keys, bucket); nothing was written\n"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/xdg/r2up"))

        let path = folder.path + "/xdg/r2up/config"
        try FileManager.default.createDirectory(atPath: folder.path + "/xdg/r2up", withIntermediateDirectories: true)
        let before = "[other]\nbucket = keep\n"
        try before.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        // Each wrong answer is explained and asked again; input that ends first writes nothing.
        let bad = try await CLI.run(["config", "init"], environment: env, input: "ftp://example.com\n")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains(
            "r2up: the endpoint: 'ftp://example.com' is neither an http(s) URL nor a 32-hex-digit R2 account id; try again\n"))
        #expect(bad.stderr.hasSuffix(
            "r2up: config init needs answers on standard input (endpoint, keys, bucket); nothing was written\n"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/xdg/r2up") == ["config"])
    }

    @Test("doctor against the server: every check passes, the probe object is gone, exit 0")
    func doctorPasses() async throws {
        let folder = try TemporaryFolder()
        var env = Self.bare(folder)
        for (name, value) in try CLI.serverEnvironment() { env[name] = value }
        let result = try await CLI.run(["doctor"], environment: env)
        #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let server = try CLI.serverEnvironment()
        #expect(lines.count == 11)
        #expect(lines[0] == "✓ config: profile default; no config file found, settings from flags and environment only")
        #expect(lines[1].hasPrefix("✓ credentials: access key id ") && lines[1].hasSuffix(", from environment AWS_ACCESS_KEY_ID"))
        #expect(lines[2].hasPrefix("✓ endpoint: \(server["R2UP_ENDPOINT"]!) answered (HTTP "))
        #expect(lines[3] == "- TLS: plain HTTP, nothing is encrypted")
        #expect(lines[4] == "✓ bucket: '\(server["R2UP_BUCKET"]!)' exists and the credentials can list it")
        #expect(lines[5].hasPrefix("✓ write: wrote, read back and deleted .r2up-doctor/probe-"))
        #expect(lines[6].hasPrefix("✓ public URL: fetched the probe through \(server["R2UP_PUBLIC_URL"]!)/.r2up-doctor/probe-"))
        #expect(lines[6].hasSuffix(" without credentials"))
        #expect(lines[7].hasPrefix("✓ clock: offset "))
        #expect(lines[9] == "✓ database: \(folder.path)/db.sqlite is not created yet; the first upload creates it")
        #expect(lines[10].hasPrefix("doctor: ") && lines[10].contains(", 0 failed"))
        for line in lines { #expect(!line.contains(server["AWS_SECRET_ACCESS_KEY"]!)) }
        #expect(try await Self.probeObjects().isEmpty)
    }

    @Test("doctor: a wrong secret, a refused endpoint or a missing bucket exits 3 and says what to do", arguments: [
        ("wrong secret", "✗ bucket: the server computed another signature (SignatureDoesNotMatch)"),
        ("refused", "✗ endpoint: http://127.0.0.1:9 is unreachable: it refused the connection"),
        ("missing bucket", "✗ bucket: the bucket 'r2up-no-such-bucket-doctor' does not exist (NoSuchBucket)"),
    ])
    func doctorFails(scenario: String, line: String) async throws {
        let folder = try TemporaryFolder()
        var env = Self.bare(folder)
        for (name, value) in try CLI.writerEnvironment() { env[name] = value }
        switch scenario {
        case "wrong secret": env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-0123456789"
        case "refused": env["R2UP_ENDPOINT"] = "http://127.0.0.1:9"
        default: env["R2UP_BUCKET"] = "r2up-no-such-bucket-doctor"
        }
        let result = try await CLI.run(["doctor"], environment: env)
        #expect(result.status == 3, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix(line + " — ") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("- write: skipped (the ") })
        #expect(lines.contains { $0.hasPrefix("- public URL: skipped (the ") })
        #expect(!result.stdout.contains("not-the-secret"))
    }

    @Test("doctor fetches the probe through the public URL and says what is wrong when it does not serve", arguments: [
        "missing bucket path", "bucket path too much", "wrong base", "not public",
    ])
    func doctorPublicURL(scenario: String) async throws {
        let folder = try TemporaryFolder()
        var env = Self.bare(folder)
        let server = try CLI.serverEnvironment()
        for (name, value) in server { env[name] = value }
        let endpoint = server["R2UP_ENDPOINT"]!
        let bucket = server["R2UP_BUCKET"]!
        var helper: HelperServer?
        defer { helper?.stop() }
        let expected: String
        switch scenario {
        case "missing bucket path":
            env["R2UP_PUBLIC_URL"] = endpoint
            expected = "but \(endpoint)/\(bucket)/.r2up-doctor/probe-"
        case "bucket path too much":
            // The bucket's path given twice: one too many, as a custom domain with the bucket's path added.
            env["R2UP_PUBLIC_URL"] = endpoint + "/" + bucket + "/" + bucket
            expected = "but \(endpoint)/\(bucket) serves the bucket at its root"
        case "wrong base":
            // Another host (a CDN's, here the server by name): a base on the endpoint's own host
            // that names another bucket is set aside when settings resolve (SettingsTests).
            let base = endpoint.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/r2up-no-such-public-bucket"
            env["R2UP_PUBLIC_URL"] = base
            expected = "the public URL base \(base) does not serve this bucket"
        case "not public":
            let proxy = try await HelperServer.start(
                "faultproxy.py",
                ["--upstream", endpoint.replacingOccurrences(of: "http://", with: ""), "--script", "1=error:403",
                 "--only-methods", "GET", "--max-seconds", "120"])
            helper = proxy
            env["R2UP_PUBLIC_URL"] = proxy.endpoint + "/" + bucket
            expected = "answered HTTP 403: public access is not enabled for the bucket"
        default:
            throw HarnessError("unknown scenario \(scenario)")
        }
        let result = try await CLI.run(["doctor"], environment: env)
        let line = result.stdout.split(separator: "\n").map(String.init).first { $0.contains("public URL:") } ?? ""
        #expect(result.status == 3, "\(result.stdout)")
        #expect(line.hasPrefix("✗ public URL: ") && line.contains(expected), "\(scenario): \(line)")
        #expect(line.contains(" — "), "advice: \(line)")
        #expect(try await Self.probeObjects().isEmpty)
    }

    @Test("doctor: a database that is not SQLite exits 5; --quiet prints only the failure")
    func doctorDatabase() async throws {
        let folder = try TemporaryFolder()
        var env = Self.bare(folder)
        env["R2UP_DB"] = folder.write("db.sqlite", String(repeating: "not a database\n", count: 400))
        env["R2UP_ENDPOINT"] = "http://127.0.0.1:9"
        env["LANG"] = "C"
        let result = try await CLI.run(["doctor"], environment: env)
        // The endpoint fails too; 3 wins over 5, as DESIGN orders them.
        #expect(result.status == 3)
        #expect(result.stdout.contains("\nFAIL database: "))
        #expect(!result.stdout.contains("✗"))

        env["R2UP_ENDPOINT"] = nil
        for (name, value) in try CLI.serverEnvironment() where name != "R2UP_DB" { env[name] = value }
        let quiet = try await CLI.run(["doctor", "--quiet"], environment: env)
        #expect(quiet.status == 5, "stdout: \(quiet.stdout)\nstderr: \(quiet.stderr)")
        let lines = quiet.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("FAIL database: "), "\(quiet.stdout)")
        #expect(try await Self.probeObjects().isEmpty)
    }
}
