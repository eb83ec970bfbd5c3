import Foundation
import Testing

@testable import SigV4

/// Every case of the AWS SigV4 suite, signed in both forms and compared stage by stage: the first stage that
/// differs stops the case, so the failure names it.
@Suite("AWS SigV4 test suite")
struct AWSSuiteTests {
    @Test("the table holds all 38 suite cases, each once")
    func tableIsComplete() {
        let names = SuiteCase.all.map(\.name)
        #expect(names.count == 38)
        #expect(Set(names).count == names.count)
    }

    @Test("header form", arguments: SuiteCase.all)
    func headerForm(_ suiteCase: SuiteCase) throws {
        let expected = suiteCase.headerForm
        var request = suiteCase.request
        // Service "service" adds no x-amz-content-sha256 of its own; the suite sends one when it signs the body.
        if suiteCase.body != nil { request.headers.append(("x-amz-content-sha256", suiteCase.payload.headerValue)) }
        let signer = suiteCase.signer
        let result = signer.headerSigning(
            request, payload: suiteCase.payload, date: SuiteCase.date, wirePath: suiteCase.wirePath)

        try #require(result.canonicalRequest == expected.canonicalRequest, "stage 1: canonical request")
        try #require(result.stringToSign == expected.stringToSign, "stage 2: string to sign")
        try #require(result.signature == expected.signature, "stage 4: signature")

        let authorization =
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            + "SignedHeaders=\(expected.signedHeaders), Signature=\(expected.signature)"
        var added = [("x-amz-date", "20150830T123600Z")]
        if let token = suiteCase.token, !suiteCase.handling.contains(.tokenAddedAfterSigning) {
            added.append(("x-amz-security-token", token))
        }
        #expect(lines(result.items) == lines(added + [("Authorization", authorization)]), "added headers")

        if !suiteCase.handling.contains(.rawRequestPath) {
            let viaPublicAPI = signer.sign(request, payload: suiteCase.payload, date: SuiteCase.date)
            #expect(lines(viaPublicAPI) == lines(result.items), "sign() returns what the stages produced")
        }
    }

    @Test("query form", arguments: SuiteCase.all)
    func queryForm(_ suiteCase: SuiteCase) throws {
        let expected = suiteCase.queryForm
        let request = suiteCase.request
        let signer = suiteCase.signer
        let result = try signer.querySigning(
            request, expires: 3600, date: SuiteCase.date, payload: suiteCase.payload, wirePath: suiteCase.wirePath)

        try #require(result.canonicalRequest == expected.canonicalRequest, "stage 1: canonical request")
        try #require(result.stringToSign == expected.stringToSign, "stage 2: string to sign")
        try #require(result.signature == expected.signature, "stage 4: signature")

        // The query handed back is what was signed, plus the signature.
        var onTheWire = request
        onTheWire.query = result.items
        let sent = onTheWire.encodedQuery.split(separator: "&").map(String.init)
        #expect(Set(sent) == Set(expected.canonicalQueryItems + ["X-Amz-Signature=\(expected.signature)"]))
        #expect(sent.count == expected.canonicalQueryItems.count + 1)
        #expect(result.items.last?.name == "X-Amz-Signature")

        if !suiteCase.handling.contains(.rawRequestPath) {
            let viaPublicAPI = try signer.presign(request, expires: 3600, date: SuiteCase.date, payload: suiteCase.payload)
            #expect(lines(viaPublicAPI) == lines(result.items), "presign() returns what the stages produced")
        }
    }

    @Test("raw request-line paths follow the same path rule as wire paths")
    func rawPathRule() {
        // What the three raw-path cases rely on: the canonical path is the wire path, normalised if asked,
        // then encoded once more; a properly encoded wire path gets the documented double encoding.
        let normalizing = Signer(credentials: Credentials(accessKeyID: "a", secretAccessKey: "b"), region: "r", service: "service")
        #expect(normalizing.canonicalPath(wirePath: "/example space/") == "/example%20space/")
        #expect(normalizing.canonicalPath(wirePath: "/\u{1234}") == "/%E1%88%B4")
        let decoded = SigningRequest(method: "GET", host: "h", path: "/example space/")
        #expect(normalizing.canonicalPath(wirePath: decoded.encodedPath) == "/example%2520space/")
    }
}
