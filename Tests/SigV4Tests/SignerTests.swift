import Foundation
import Testing

@testable import SigV4

@Suite("Signer")
struct SignerTests {
    static let credentials = Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let signer = Signer(credentials: credentials, region: "us-east-1")
    static let date = Date(timeIntervalSince1970: 1_369_353_600)
    static let request = SigningRequest(method: "GET", host: "examplebucket.s3.amazonaws.com", path: "/test.txt")

    // MARK: Presign expiry

    @Test("presign accepts 1 s and 7 days", arguments: [1, 604_800])
    func expiryAccepted(seconds: Int) throws {
        let query = try Self.signer.presign(Self.request, expires: seconds, date: Self.date)
        #expect(query.contains { $0.name == "X-Amz-Expires" && $0.value == String(seconds) })
    }

    @Test("presign rejects no time, negative time and more than 7 days", arguments: [0, -1, 604_801, Int.min, Int.max])
    func expiryRejected(seconds: Int) {
        #expect(throws: SigV4Error.expiryOutOfRange(seconds)) {
            try Self.signer.presign(Self.request, expires: seconds, date: Self.date)
        }
    }

    @Test("the expiry error says what is allowed")
    func expiryMessage() {
        #expect(SigV4Error.expiryOutOfRange(0).description.contains("604800"))
    }

    @Test("presign keeps the request's own query and puts the signature last")
    func presignItems() throws {
        let request = SigningRequest(
            method: "PUT", host: "h", path: "/k", query: [("partNumber", "2"), ("uploadId", "x y")])
        let query = try Self.signer.presign(request, expires: 60, date: Self.date)
        #expect(
            query.map(\.name) == [
                "partNumber", "uploadId", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                "X-Amz-SignedHeaders", "X-Amz-Signature",
            ])
    }

    // MARK: Header form

    @Test("S3 header form adds x-amz-date, x-amz-content-sha256 and Authorization, in that order")
    func s3Headers() {
        let headers = Self.signer.sign(Self.request, payload: .unsigned, date: Self.date)
        #expect(headers.map(\.name) == ["x-amz-date", "x-amz-content-sha256", "Authorization"])
        #expect(headers[1].value == "UNSIGNED-PAYLOAD")
        #expect(headers[2].value.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date,"))
    }

    @Test("a session token is sent and signed, in both forms")
    func sessionToken() throws {
        let signer = Signer(
            credentials: Credentials(accessKeyID: "id", secretAccessKey: "secret", sessionToken: "tok/en+"),
            region: "auto")
        let headers = signer.sign(Self.request, payload: .empty, date: Self.date)
        #expect(headers.map(\.name) == ["x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "Authorization"])
        #expect(headers[2].value == "tok/en+")
        #expect(headers[3].value.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))

        let result = try signer.querySigning(Self.request, expires: 60, date: Self.date, payload: .unsigned)
        #expect(result.canonicalRequest.contains("&X-Amz-Security-Token=tok%2Fen%2B&"))
        #expect(result.items.contains { $0.name == "X-Amz-Security-Token" && $0.value == "tok/en+" })
    }

    @Test("other services get no x-amz-content-sha256 header")
    func otherServiceHeaders() {
        let signer = Signer(credentials: Self.credentials, region: "us-east-1", service: "iam")
        #expect(signer.sign(Self.request, payload: .empty, date: Self.date).map(\.name) == ["x-amz-date", "Authorization"])
        #expect(signer.normalizePath)
        #expect(!Self.signer.normalizePath)
    }

    @Test("signing is a pure function of its inputs")
    func deterministic() {
        let first = Self.signer.sign(Self.request, payload: .empty, date: Self.date)
        let copy = Self.signer
        let second = copy.sign(Self.request, payload: .empty, date: Self.date)
        #expect(lines(first) == lines(second))
        let later = Self.signer.sign(Self.request, payload: .empty, date: Self.date + 1)
        #expect(lines(first) != lines(later))
    }

    // MARK: Signing key

    @Test("signing key from AWS's derivation example (IAM, 20150830)")
    func signingKeyExample() {
        let signer = Signer(
            credentials: Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1", service: "iam")
        #expect(hexString(signer.signingKey(day: "20150830")) == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
    }

    @Test("the key cache stays small and never changes a signature")
    func keyCache() {
        let signer = Signer(credentials: Self.credentials, region: "us-east-1")
        for day in 0..<10 {
            let date = Self.date + Double(day) * 86_400
            let cached = signer.sign(Self.request, payload: .empty, date: date)
            let again = signer.sign(Self.request, payload: .empty, date: date)
            let fresh = Signer(credentials: Self.credentials, region: "us-east-1").sign(Self.request, payload: .empty, date: date)
            #expect(lines(cached) == lines(fresh))
            #expect(lines(again) == lines(fresh))
            #expect(signer.keyCache.count <= SigningKeyCache.capacity)
        }
    }

    @Test("one signer signs from many tasks at once")
    func concurrentSigning() async {
        let signer = Signer(credentials: Self.credentials, region: "us-east-1")
        let dates = (0..<8).map { Self.date + Double($0) * 86_400 }
        let expected = dates.map {
            Signer(credentials: Self.credentials, region: "us-east-1").sign(Self.request, payload: .empty, date: $0)
                .last?.value ?? ""
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<64 {
                group.addTask {
                    var bad = 0
                    for round in 0..<50 {
                        let index = (task + round) % dates.count
                        let value = signer.sign(Self.request, payload: .empty, date: dates[index]).last?.value
                        if value != expected[index] { bad += 1 }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    // MARK: Dates

    @Test(
        "timestamps",
        arguments: [
            (0.0, "19700101T000000Z"), (1_369_353_600, "20130524T000000Z"), (1_440_938_160, "20150830T123600Z"),
            (951_782_400, "20000229T000000Z"), (1_709_251_199.999, "20240229T235959Z"),
            (4_102_444_800, "21000101T000000Z"), (253_402_300_799, "99991231T235959Z"),
        ])
    func timestamps(seconds: Double, expected: String) {
        let time = AMZDate(Date(timeIntervalSince1970: seconds))
        #expect(time.timestamp == expected)
        #expect(time.day == String(expected.prefix(8)))
    }

    @Test("out-of-range and non-finite dates are clamped, never trap")
    func clampedDates() {
        #expect(AMZDate(Date(timeIntervalSince1970: -1)).timestamp == "19700101T000000Z")
        #expect(AMZDate(Date(timeIntervalSince1970: .nan)).timestamp == "19700101T000000Z")
        #expect(AMZDate(Date(timeIntervalSince1970: -.infinity)).timestamp == "19700101T000000Z")
        #expect(AMZDate(Date(timeIntervalSince1970: .infinity)).timestamp == "99991231T235959Z")
        #expect(AMZDate(.distantPast).timestamp == "19700101T000000Z")
        #expect(AMZDate(.distantFuture).timestamp == "40010101T000000Z")
        #expect(AMZDate(Date(timeIntervalSince1970: 1e300)).timestamp == "99991231T235959Z")
    }

    @Test("timestamps agree with Foundation's Gregorian calendar across the whole range")
    func timestampsMatchCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let seconds = Double(state % 253_402_300_800)
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(
                format: "%04d%02d%02dT%02d%02d%02dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
            #expect(AMZDate(date).timestamp == expected, "at \(seconds)")
        }
    }

    // MARK: Robustness

    @Test("odd inputs sign without trapping")
    func oddInputs() throws {
        let requests = [
            SigningRequest(method: "", host: "", path: ""),
            SigningRequest(method: "get", host: " ", path: "///", query: [("", ""), ("=", "&")]),
            SigningRequest(
                method: "PUT", host: "h\u{0}", path: "/%%%/\u{0}/\u{FFFF}/\u{1F3B5}",
                headers: [(" ", " "), ("X\r\nY", "a\r\nb"), ("\u{E9}", "\u{0}")]),
        ]
        let signers = [
            Self.signer,
            Signer(credentials: Credentials(accessKeyID: "", secretAccessKey: ""), region: "", service: ""),
            Signer(credentials: Self.credentials, region: "us-east-1", service: "service", normalizePath: true),
        ]
        for signer in signers {
            for request in requests {
                for date in [Self.date, Date(timeIntervalSince1970: .nan)] {
                    let headers = signer.sign(request, payload: .sha256(hex: ""), date: date)
                    #expect(headers.last?.value.hasPrefix("AWS4-HMAC-SHA256 Credential=") == true)
                    let query = try signer.presign(request, expires: 1, date: date)
                    #expect(query.last?.value.count == 64)
                }
            }
        }
    }

    // MARK: Credentials

    @Test("printing credentials never shows the secret or the token")
    func credentialsMasked() {
        let credentials = Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t-value", sessionToken: "t0k3n-value")
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [
            credentials.description, credentials.debugDescription, "\(credentials)", String(reflecting: credentials),
            dumped, "\([credentials])",
        ] {
            #expect(text.contains("AKIDEXAMPLE"))
            #expect(!text.contains("s3cr3t-value"))
            #expect(!text.contains("t0k3n-value"))
        }
        #expect(credentials.description.contains("sessionToken"))
        #expect(!Credentials(accessKeyID: "a", secretAccessKey: "b").description.contains("sessionToken"))
    }
}
