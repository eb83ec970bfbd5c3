import Foundation
import Testing
@testable import R2UpTransfer

/// The rule that picks the uploads a Create whose reply was lost made (LostCreates): only this
/// key's, only inside a lost try's window measured from the upload r2up knows, never without it.
@Suite("Lost CreateMultipartUpload replies")
struct LostCreatesTests {
    static let start = ContinuousClock().now
    /// A local span from `from` to `to` seconds after `start`.
    static func span(_ from: Double, _ to: Double) -> CreateAttempt {
        CreateAttempt(sent: start + .milliseconds(Int(from * 1000)), ended: start + .milliseconds(Int(to * 1000)))
    }
    static let anchor = Date(timeIntervalSince1970: 1_800_000_000)
    static func upload(_ id: String, key: String = "a/mix.flac", at seconds: Double?) -> PendingMultipartUpload {
        PendingMultipartUpload(key: key, uploadID: id, initiated: seconds.map { anchor.addingTimeInterval($0) })
    }

    // A lost try from 0 to 0.4 s, the answered one from 0.9 to 1.0 s: the lost upload was made
    // between 1.0 and 0.5 s before the own one (in server time), ±1 s of timestamp precision.
    let lost = [span(0, 0.4)]
    let answered = span(0.9, 1.0)

    func picked(_ uploads: [PendingMultipartUpload], lost: [CreateAttempt]? = nil) -> [String] {
        LostCreates.orphans(in: uploads, key: "a/mix.flac", own: "own", answered: answered, lost: lost ?? self.lost)
            .map(\.uploadID)
    }

    @Test("the upload made by the lost try is taken; one of another key, or out of the window, is not")
    func window() {
        let uploads = [
            Self.upload("own", at: 0),
            Self.upload("lost", at: -0.7),
            Self.upload("longer key", key: "a/mix.flac.bak", at: -0.7),
            Self.upload("shorter key", key: "a/mix.fla", at: -0.7),
            Self.upload("an hour before", at: -3600),
            Self.upload("3 s before", at: -3),
            Self.upload("2 s after", at: 2),
            Self.upload("no time", at: nil),
        ]
        #expect(picked(uploads) == ["lost"])
    }

    @Test("whole-second timestamps (SeaweedFS): the edges of the window widen by one second")
    func precision() {
        // True times -0.95 and +0.05 s truncated to whole seconds: -1 and 0.
        #expect(picked([Self.upload("own", at: 0), Self.upload("lost", at: -1)]) == ["lost"])
        #expect(picked([Self.upload("own", at: 0), Self.upload("lost", at: 0)]) == ["lost"])
        #expect(picked([Self.upload("own", at: 0), Self.upload("other", at: -2.1)]).isEmpty)
        #expect(picked([Self.upload("own", at: 0), Self.upload("other", at: 1.1)]).isEmpty)
    }

    @Test("no anchor, nothing taken: the own upload not listed, or listed without a time; and no lost try, nothing")
    func noAnchor() {
        #expect(picked([Self.upload("lost", at: -0.7)]).isEmpty)
        #expect(picked([Self.upload("own", at: nil), Self.upload("lost", at: -0.7)]).isEmpty)
        #expect(picked([Self.upload("own", at: 0), Self.upload("lost", at: -0.7)], lost: []).isEmpty)
    }

    @Test("a clock hours off changes nothing: only the server's own timestamps are compared")
    func skew() {
        let later = 7200.0
        let uploads = [Self.upload("own", at: later), Self.upload("lost", at: later - 0.7), Self.upload("other", at: 0)]
        #expect(picked(uploads) == ["lost"])
    }

    @Test("a refused connection or an unknown host made nothing; a reset, a timeout or a garbled reply may have")
    func mayHaveCreated() {
        #expect(!LostCreates.mayHaveCreated(.transfer(TransferError(kind: .connectionRefused, message: "refused"))))
        #expect(!LostCreates.mayHaveCreated(.transfer(TransferError(kind: .dnsFailure, message: "dns"))))
        #expect(LostCreates.mayHaveCreated(.transfer(TransferError(kind: .connectionReset, message: "reset"))))
        #expect(LostCreates.mayHaveCreated(.transfer(TransferError(kind: .timeout, message: "timeout"))))
        #expect(LostCreates.mayHaveCreated(.unexpectedResponse("the reply is not XML (HTTP 200)")))
    }
}
