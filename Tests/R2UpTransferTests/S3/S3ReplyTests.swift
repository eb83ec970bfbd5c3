import Testing
import FoundationEssentials
@testable import R2UpModel
@testable import R2UpTransfer

@Suite("S3 replies become typed values")
struct S3ReplyTests {
    func response(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Array(body.utf8), bodyBytesReceived: Int64(body.utf8.count))
    }

    @Test("an S3 error document gives code, message, status and request id")
    func errorDocument() {
        let error = S3ServiceError(
            response: response(
                404,
                "<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><RequestId>ABC123</RequestId></Error>"
            ))
        #expect(error == S3ServiceError(status: 404, code: "NoSuchBucket", message: "The specified bucket does not exist", requestID: "ABC123"))
        #expect(error.description == "NoSuchBucket (HTTP 404): The specified bucket does not exist")
    }

    @Test("an error status over a body of object bytes is counted, never printed (issue 28: mutated replies)")
    func binaryErrorBody() {
        let bytes: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let error = S3ServiceError(
            response: HTTPResponse(status: 404, headers: [], body: bytes, bodyBytesReceived: Int64(bytes.count)))
        #expect(error.message == "the reply is not an S3 error document: 5000 bytes that are not text")
        #expect(error.code == "NotFound")
    }

    @Test("an HTML page from something that is not S3 says so")
    func htmlReply() {
        let error = S3ServiceError(response: response(502, "<html><body>Bad gateway</body></html>"))
        #expect(error.code == "")
        #expect(error.message.hasPrefix("the reply is not an S3 error document"))
        let diagnosis = Diagnosis(S3ClientError.service(error))
        #expect(diagnosis.category == .configuration)
    }

    @Test("a web server's 404 page is not S3, not a missing object")
    func webServerNotFound() {
        let error = S3ServiceError(response: response(404, "404 page not found\n"))
        #expect(error.code == "" && !error.codeFromStatus)
        let diagnosis = Diagnosis(S3ClientError.service(error))
        #expect(diagnosis.category == .configuration)
        #expect(diagnosis.message == "the endpoint does not speak S3: HTTP 404, the reply is not an S3 error document: 404 page not found")
    }

    @Test("a bodiless 403 (HEAD) is named AccessDenied")
    func headForbidden() {
        #expect(S3ServiceError(response: response(403, "")).code == "AccessDenied")
    }

    @Test("a 200 reply that carries an Error document is a failure")
    func completeWithError() {
        let reply = response(200, "<Error><Code>InternalError</Code><Message>try again</Message></Error>")
        #expect(throws: S3ClientError.service(S3ServiceError(status: 200, code: "InternalError", message: "try again"))) {
            _ = try S3Client.document(reply, root: "CompleteMultipartUploadResult")
        }
    }

    @Test("ETags lose their quotes; HTTP dates parse")
    func smallParsers() {
        #expect(S3Client.unquote("\"abc\"") == "abc")
        #expect(S3Client.unquote("abc") == "abc")
        #expect(HTTPDate.parse("Sun, 22 Nov 2026 21:00:00 GMT")?.timeIntervalSince1970 == 1_795_381_200)
        #expect(ISO8601.parse("2026-11-22T21:00:00.000Z")?.timeIntervalSince1970 == 1_795_381_200)
        #expect(HTTPDate.parse("yesterday") == nil)
    }
}
