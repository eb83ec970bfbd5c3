import Foundation
import Testing

/// `r2up push` as a user runs it: exit codes, the printed URL, and one clear line on failure.
@Suite("r2up push")
struct PushCommandTests {
    @Test("push prints the public URL, which serves the file")
    func pushPrintsURL() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("My Song #1.m4a", "not really audio, but bytes all the same")
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let run = try await CLI.run(["push", track, "--prefix", "cli-tests", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let url = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasSuffix("/cli-tests/My%20Song%20%231.m4a"))
        let fetched = try CLIProcess.curl(url)
        #expect(fetched == "not really audio, but bytes all the same")
    }

    @Test("a missing file is bad input: exit 2 and one line naming it")
    func missingFile() async throws {
        let folder = try TemporaryFolder()
        let env = CLI.environment(server: try CLI.serverEnvironment(), home: folder.path)
        let run = try await CLI.run(["push", folder.path + "/nope.m4a", "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 2)
        #expect(run.stderr == "r2up: \(folder.path)/nope.m4a: no such file\n")
        #expect(run.stdout.isEmpty)
    }

    @Test("a wrong secret exits 3 with a clear line and never prints the secret")
    func wrongSecret() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("a.m4a", "x")
        var server = try CLI.serverEnvironment()
        server["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value-123"
        let run = try await CLI.run(["push", track, "--db", folder.path + "/db.sqlite"], environment: CLI.environment(server: server, home: folder.path))
        #expect(run.status == 3)
        #expect(run.stderr.contains("(SignatureDoesNotMatch): either the secret access key is wrong"))
        #expect(run.stderr.contains("or something between r2up and the server rewrote the request"))
        #expect(run.stderr.split(separator: "\n").count == 1)
        #expect(!(run.stdout + run.stderr).contains("wrong-secret-value-123"))
    }

    @Test("an unknown bucket exits 3 naming the bucket problem")
    func unknownBucket() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("a.m4a", "x")
        let env = CLI.environment(server: try CLI.writerEnvironment(), home: folder.path)
        let bucket = "no-such-bucket-\(UInt32.random(in: 0...UInt32.max))"
        let run = try await CLI.run(["push", track, "--bucket", bucket, "--db", folder.path + "/db.sqlite"], environment: env)
        #expect(run.status == 3)
        // The configured public URL belongs to the configured bucket: said once, before the error.
        #expect(run.stderr == """
            warning: the public URL \(env["R2UP_PUBLIC_URL"]!) belongs to bucket '\(env["R2UP_BUCKET"]!)'; URLs for '\(bucket)' are path-style (pass --public-url to set its own)
            r2up: the bucket '\(bucket)' does not exist (NoSuchBucket); check --bucket or R2UP_BUCKET

            """)
    }

    @Test("no endpoint configured exits 3 and says how to set one")
    func noEndpoint() async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("a.m4a", "x")
        let run = try await CLI.run(["push", track, "--db", folder.path + "/db.sqlite"], environment: CLI.environment(home: folder.path))
        #expect(run.status == 3)
        #expect(run.stderr == "r2up: no endpoint is set; use --endpoint, R2UP_ENDPOINT or R2_ACCOUNT_ID\n")
    }

    @Test("invalid numbers are usage errors (exit 2)", arguments: [
        ["--concurrency", "0"], ["--part-size", "1M"], ["--part-size", "6G"], ["--bwlimit", "fast"],
    ])
    func invalidNumbers(arguments: [String]) async throws {
        let folder = try TemporaryFolder()
        let track = folder.write("a.m4a", "x")
        let run = try await CLI.run(["push", track] + arguments, environment: CLI.environment(home: folder.path))
        #expect(run.status == 2, "stderr: \(run.stderr)")
        // One line in the r2up: style of every other error, pointing at the command's help.
        #expect(run.stderr.hasPrefix("r2up: ") && run.stderr.hasSuffix(" (see r2up push --help)\n"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }
}

enum CLIProcess {
    static func curl(_ url: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-fsS", url]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
