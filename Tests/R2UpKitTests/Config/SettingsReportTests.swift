import Foundation
import Testing
@testable import R2UpKit
import R2UpTestSupport

/// `config show` and `doctor`'s lines: exact texts, and never a secret.
@Suite("Settings report and doctor lines")
struct SettingsReportTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "FQoGZXIvYXdzEXAMPLESESSIONTOKEN"

    @Test("secrets show as their length; the access key id as its first and last 4 characters")
    func masking() {
        #expect(SettingsReport.describeSecret(Self.secret) == "set (40 characters)")
        #expect(SettingsReport.describeSecret("x") == "set (1 character)")
        #expect(SettingsReport.mask("AKIAIOSFODNN7EXAMPLE") == "AKIA…MPLE")
        #expect(SettingsReport.mask("AKIAIOSFODNN7EXAMPLE", ascii: true) == "AKIA...MPLE")
        #expect(SettingsReport.mask("shortkey") == "set (8 characters)")
    }

    @Test("each setting names its source; neither the secret nor the token appears, in text or JSON")
    func report() throws {
        let directory = try TestDirectory()
        // Each variable is shown under the name its giver chose (the CLI: the environment's).
        var variables = SettingVariables()
        variables.endpoint = [SettingVariable(name: "Endpoint", value: "http://127.0.0.1:8333")]
        variables.accessKeyID = SettingVariable(name: "Key", value: "AKIAIOSFODNN7EXAMPLE")
        variables.secretAccessKey = SettingVariable(name: "Secret", value: Self.secret)
        variables.sessionToken = SettingVariable(name: "Token", value: Self.token)
        let resolver = SettingsResolver(variables: variables, locations: ConfigLocations(homeDirectory: directory.path))
        var flags = SettingOverrides()
        flags.bucket = "music"
        let settings = try resolver.resolve(flags)
        let report = SettingsReport(settings: settings, resolver: resolver)
        let rows = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.id, $0) })
        #expect(rows["endpoint"]?.source == "environment Endpoint")
        // The library's own words for an option (the CLI installs its flags': `flag --bucket`).
        #expect(rows["bucket"]?.value == "music" && rows["bucket"]?.source == "flag the bucket option")
        #expect(rows["region"]?.value == "us-east-1" && rows["region"]?.source == "default")
        #expect(rows["accessKeyID"]?.value == "AKIA…MPLE")
        #expect(rows["accessKeyID"]?.source == "environment Key")
        #expect(rows["secretAccessKey"]?.value == "set (40 characters)")
        #expect(rows["secretAccessKey"]?.source == "environment Secret")
        #expect(rows["sessionToken"]?.value == "set (31 characters)")
        #expect(rows["sessionToken"]?.source == "environment Token")
        #expect(rows["publicURL"]?.value == nil)
        #expect(report.lines.contains("public URL         (not set)"))
        #expect(report.lines.contains { $0.hasPrefix("  \(directory.path)/.config/r2up/config") && $0.hasSuffix("not found") })
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        for text in [report.lines.joined(separator: "\n"), json] {
            #expect(!text.contains(Self.secret) && !text.contains(Self.token) && !text.contains("IOSFODNN7"))
        }
    }

    @Test("the outcome: configuration for setup failures, a store failure for the database, success for warnings and the clipboard")
    func status() {
        func report(_ failed: [DoctorCheck.Kind], warned: [DoctorCheck.Kind] = []) -> DoctorReport {
            DoctorReport(checks: failed.map { DoctorCheck($0, .fail, "x") } + warned.map { DoctorCheck($0, .warning, "x") })
        }
        #expect(report([]).category == .success)
        #expect(report([], warned: [.clock, .bucket]).category == .success)
        #expect(report([.clipboard]).category == .success)
        #expect(report([.database]).category == .storeFailure)
        #expect(report([.database, .endpoint]).category == .configuration)
        for kind in [DoctorCheck.Kind.config, .credentials, .endpoint, .tls, .bucket, .write] {
            #expect(report([kind]).category == .configuration, "\(kind)")
        }
        let mixed = DoctorReport(checks: [
            DoctorCheck(.config, .pass, "x"), DoctorCheck(.endpoint, .fail, "x"),
            .skipped(.bucket, because: .endpoint), DoctorCheck(.clock, .warning, "x"),
        ])
        #expect(mixed.summary == "1 passed, 1 warning, 1 failed, 1 skipped")
    }

    @Test("clock: within a second is 0; over 5 minutes is a warning that says which way", arguments: [
        (0.4, DoctorCheck.Outcome.pass, "offset 0 s from the server's Date header"),
        (-2.0, .pass, "offset -2 s from the server's Date header"),
        (299.0, .pass, "offset +299 s from the server's Date header"),
        (900.0, .warning, "this clock is 900 s behind the server's (offset +900 s)"),
        (-3600.0, .warning, "this clock is 3600 s ahead of the server's (offset -3600 s)"),
    ])
    func clock(offset: TimeInterval, outcome: DoctorCheck.Outcome, detail: String) {
        let check = Doctor.clockCheck(offset: offset)
        #expect(check.outcome == outcome)
        #expect(check.detail == detail)
    }
}
