import Foundation
import R2UpTestSupport
import Testing
@testable import r2up
@testable import R2UpKit
import R2UpModel

@Suite("doctor's lines")
struct DoctorLineTests {
    @Test("doctor lines: glyphs and colour on a UTF-8 terminal, words in ASCII")
    func doctorLines() {
        let failed = DoctorCheck(.bucket, .fail, "the bucket 'x' does not exist (NoSuchBucket)", advice: "create it")
        #expect(failed.line(style: TerminalStyle(ascii: false, colour: false))
            == "✗ bucket: the bucket 'x' does not exist (NoSuchBucket) — create it")
        #expect(failed.line(style: TerminalStyle(ascii: true, colour: false))
            == "FAIL bucket: the bucket 'x' does not exist (NoSuchBucket) -- create it")
        #expect(failed.line(style: TerminalStyle(ascii: false, colour: true)).hasPrefix("\u{1B}["))
        let passed = DoctorCheck(.write, .pass, "wrote, read back and deleted p…", advice: "unused")
        #expect(passed.line(style: TerminalStyle(ascii: true, colour: false)) == "ok write: wrote, read back and deleted p...")
        #expect(DoctorCheck(.tls, .skipped, "plain HTTP").line(style: TerminalStyle(ascii: false, colour: false))
            == "- TLS: plain HTTP")
    }

    @Test("no endpoint: the line names the flag and variables once, the advice adds config init")
    func missingEndpointAdvice() {
        let line = "\(ConfigurationError.missingEndpoint) — \(Doctor.advice(for: .missingEndpoint) ?? "")"
        #expect(line.components(separatedBy: OptionName.endpoint.everySource).count == 2, "\(line)")
        #expect(line.hasSuffix("\(Remedy.runConfigInit)"), "\(line)")
    }
}
