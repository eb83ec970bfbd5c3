import Foundation
import SigV4
import Testing
@testable import R2UpKit
@testable import R2UpModel
@testable import R2UpTransfer

/// Issue 15's rules for input and replies, as pure functions with exact answers.
@Suite("Hardening: input rules and reply checks")
struct HardeningTests {
    @Test("public URL bases: scheme and host required, no query, fragment, user, space or broken escape", arguments: [
        ("https://cdn.example.com/", "https://cdn.example.com", nil),
        ("https://pub-abc.r2.dev/music//", "https://pub-abc.r2.dev/music", nil),
        ("http://127.0.0.1:8333/bucket", "http://127.0.0.1:8333/bucket", nil),
        ("cdn.example.com", nil, "it has no scheme; give it as https://cdn.example.com"),
        ("https://cdn.example.com/?x=1", nil, "a query (?…) or fragment (#…) cannot go before a key"),
        ("https://cdn.example.com/#top", nil, "a query (?…) or fragment (#…) cannot go before a key"),
        ("http://exa mple.com/%%zz", nil, "it holds a space or control character"),
        ("http://example.com/%zz", nil, "'%' must start an escape like %20"),
        ("http://example.com/%2", nil, "'%' must start an escape like %20"),
        ("ftp://example.com", nil, "it is not an http(s) URL"),
        ("https://user:pw@example.com", nil, "it holds a user name or password"),
        ("https://", nil, "it has no host"),
    ] as [(String, String?, String?)])
    func publicBases(text: String, base: String?, reason: String?) {
        switch PublicBase.validated(text) {
        case .success(let value): #expect(value == base && reason == nil)
        case .failure(let problem): #expect(problem.reason == reason && base == nil, "\(problem)")
        }
    }

    @Test("endpoints with a fragment, a space or a broken escape are refused")
    func endpoints() throws {
        for text in ["http://127.0.0.1:8333#x", "http://127.0.0.1:8333/%zz", "http://exa mple.com", "127.0.0.1:8333"] {
            #expect(throws: ConfigurationError.invalidEndpoint(text)) { try S3Endpoint(url: text) }
        }
        #expect(try S3Endpoint(url: "http://127.0.0.1:8333").port == 8333)
    }

    @Test("S3 bucket naming rules, each broken rule named", arguments: [
        ("r2up-test", nil), ("my.bucket.01", nil), ("abc", nil),
        ("Bad_Bucket!", "a bucket name holds only lower-case letters, digits, '.' and '-'"),
        ("ab", "a bucket name is 3 to 63 characters long"),
        (String(repeating: "a", count: 64), "a bucket name is 3 to 63 characters long"),
        ("-abc", "a bucket name starts and ends with a letter or digit"),
        ("abc.", "a bucket name starts and ends with a letter or digit"),
        ("a..b", "a bucket name has no two adjacent dots"),
        ("192.168.5.4", "a bucket name is not an IP address"),
    ] as [(String, String?)])
    func bucketNames(name: String, rule: String?) {
        #expect(BucketName.problem(name) == rule)
    }

    @Test("header values with CR, LF or other controls are refused; tabs too")
    func headerValues() {
        #expect(HeaderValue.problem("audio/mp4") == nil)
        #expect(HeaderValue.problem("public, max-age=31536000") == nil)
        #expect(HeaderValue.problem("text/plain\r\nX-Evil: 1") == "it holds a control character (U+000D)")
        #expect(HeaderValue.problem("a\nb") == "it holds a control character (U+000A)")
        #expect(HeaderValue.problem("a\u{7F}") == "it holds a control character (U+007F)")
    }

    @Test("keys: empty, a leading or trailing '/', or over 1,024 bytes are refused; dot segments are kept")
    func keys() throws {
        #expect(throws: UploadError.invalidKey("the key is empty")) { try ObjectKey.validated("") }
        #expect(throws: UploadError.invalidKey("the key '/lead.mp3' starts with '/'; keys are relative, like albums/a.m4a")) {
            try ObjectKey.validated("/lead.mp3")
        }
        #expect(throws: UploadError.invalidKey("the key 'dir/' ends with '/', which names a folder, not a file")) {
            try ObjectKey.validated("dir/")
        }
        #expect(throws: UploadError.self) { try ObjectKey.validated(String(repeating: "k", count: 1025)) }
        #expect(try ObjectKey.validated("a/../b.m4a") == "a/../b.m4a")
        #expect(try ObjectKey.validated("./x/./y.m4a") == "./x/./y.m4a")
        #expect(ObjectKey.prefixProblem("/abs") == "the prefix option '/abs' starts with '/'; a prefix is relative, like albums/2026/")
        #expect(ObjectKey.prefixProblem("albums/") == nil)
    }

    @Test("--meta keys that differ only in case conflict")
    func metaConflicts() {
        #expect(ObjectMetadata.parse(["K=1", "k=2"]) == .failure(.duplicateKey("k")))
        #expect(ObjectMetadata.parse(["a=1", "b=2"]) == .success(["a": "1", "b": "2"]))
    }

    @Test("globs fnmatch would silently read as nothing are refused", arguments: [
        ("[", "'[' has no closing ']'"), ("*.[fm", "'[' has no closing ']'"), ("a\\", "it ends with a lone '\\'"),
        ("", "the pattern is empty"), ("*.flac", nil), ("[]x]*", nil), ("[!.]*", nil), ("Live/*", nil), ("\\[x", nil),
    ] as [(String, String?)])
    func globs(pattern: String, problem: String?) {
        #expect(SyncFilter.problem(pattern) == problem)
    }

    @Test("Content-Range of a 206 must be the range asked for")
    func contentRanges() {
        #expect(ContentRange.matches("bytes 0-4/11", 0...4))
        #expect(ContentRange.matches("bytes 0-4/*", 0...4))
        #expect(!ContentRange.matches("bytes 1-5/11", 0...4))
        #expect(!ContentRange.matches("", 0...4))
        #expect(!ContentRange.matches("bytes 0-99999999999999999999/11", 0...4))
        #expect(!ContentRange.matches("items 0-4/11", 0...4))
        // Found by scripts/fuzz.sh reply-head: Int64("+4") is 4, so a signed position was taken.
        #expect(ContentRange.matches("bytes 0-04/11", 0...4))
        #expect(!ContentRange.matches("bytes 0-+4/11", 0...4))
        #expect(!ContentRange.matches("bytes +0-4/11", 0...4))
        #expect(!ContentRange.matches("bytes 0-4", 0...4))
        #expect(!ContentRange.matches("bytes 0-4/4", 0...4))
        #expect(!ContentRange.matches("bytes 0-4/+11", 0...4))
        #expect(!ContentRange.matches("bytes 0-4/", 0...4))
    }

    @Test("a HEAD's Content-Length is digits only: a signed one is no length")
    func signedContentLength() {
        func head(_ length: String) -> HTTPResponse {
            HTTPResponse(status: 200, headers: [("content-length", length), ("etag", "\"abc\"")], body: [], bodyBytesReceived: 0)
        }
        #expect((try? S3Client.objectInfo(head("5")))?.size == 5)
        #expect((try? S3Client.objectInfo(head("+5"))) == nil)
        #expect((try? S3Client.objectInfo(head("-0"))) == nil)
    }

    @Test("a listing that says truncated without a token, or an entry without a key or size, is refused")
    func listings() throws {
        func reply(_ inner: String) -> HTTPResponse {
            let body = Array("<ListBucketResult>\(inner)</ListBucketResult>".utf8)
            return HTTPResponse(status: 200, headers: [], body: body, bodyBytesReceived: Int64(body.count))
        }
        #expect(throws: S3ClientError.unexpectedResponse("the listing says it is truncated but gives no continuation token")) {
            try S3Client.listing(reply("<IsTruncated>true</IsTruncated>"))
        }
        #expect(throws: S3ClientError.unexpectedResponse("a listing entry has no key or size")) {
            try S3Client.listing(reply("<Contents><Key>a</Key></Contents>"))
        }
        let page = try S3Client.listing(
            reply("<IsTruncated>true</IsTruncated><NextContinuationToken>t</NextContinuationToken><Contents><Key>a</Key><Size>3</Size></Contents>"))
        #expect(page.continuationToken == "t")
        #expect(page.objects.map(\.size) == [3])
    }

    @Test("a HEAD without Content-Length or ETag is a retryable transfer error, never a 0-byte object")
    func headReplies() throws {
        func head(_ headers: [(name: String, value: String)]) -> HTTPResponse {
            HTTPResponse(status: 200, headers: headers, body: [], bodyBytesReceived: 0)
        }
        let cut = S3ClientError.transfer(
            TransferError(kind: .connectionReset, message: "the HEAD reply came without Content-Length or ETag (cut short?)"))
        #expect(throws: cut) { try S3Client.objectInfo(head([("etag", "\"e\"")])) }
        #expect(throws: cut) { try S3Client.objectInfo(head([("content-length", "11")])) }
        #expect(throws: cut) { try S3Client.objectInfo(head([("content-length", "-1"), ("etag", "\"e\"")])) }
        #expect(cut.failureKind.retryClass == .retryable)
        #expect(try S3Client.objectInfo(head([("content-length", "11"), ("etag", "\"e\"")])).size == 11)
    }

    @Test("an upload reply without an ETag is 'does not answer like S3' (exit 3); moto's empty text/html PUT reply with an ETag is fine")
    func uploadReplies() throws {
        let moto = HTTPResponse(
            status: 200, headers: [("content-type", "text/html; charset=utf-8"), ("etag", "\"abc\"")], body: [], bodyBytesReceived: 0)
        #expect(try S3Client.requiredETag(moto) == "abc")
        let page = Array("<html>It works!</html>".utf8)
        let html = HTTPResponse(status: 200, headers: [("content-type", "text/html")], body: page, bodyBytesReceived: Int64(page.count))
        do {
            _ = try S3Client.requiredETag(html)
            Issue.record("an HTML page was taken as an upload reply")
        } catch {
            #expect(Diagnosis(error).category == .configuration)
            #expect(Diagnosis(error).message.hasPrefix("the endpoint does not answer like S3: it answered an HTML page (HTTP 200)"))
        }
    }

    @Test("server errors: InvalidBucketName is a configuration error; SignatureDoesNotMatch names both causes")
    func serverCodes() {
        let invalid = Diagnosis(S3ClientError.service(S3ServiceError(status: 400, code: "InvalidBucketName", message: "")))
        #expect(invalid.category == .configuration)
        let signature = Diagnosis(S3ClientError.service(S3ServiceError(status: 403, code: "SignatureDoesNotMatch", message: "")))
        #expect(signature.category == .configuration)
        #expect(signature.message.contains("the secret access key is wrong"))
        #expect(signature.message.contains("something between r2up and the server rewrote the request"))
    }

    @Test("a name that is not UTF-8 is shown with its bytes escaped")
    func escapedNames() {
        #expect(FilePath.escaped([0x61, 0xFF, 0x2E, 0x6D, 0x34, 0x61]) == "a\\xFF.m4a")
        #expect(FilePath.escaped(Array("a\\b".utf8)) == "a\\x5Cb")
    }

    @Test("the transfer engine refuses to send a header value with CR LF, whoever built the request")
    func engineRefusesInjectedHeaders() async throws {
        let engine = try TransferEngine()
        defer { engine.shutdown() }
        let request = HTTPRequest(method: "GET", url: "http://127.0.0.1:1/x", headers: [("Content-Type", "text/plain\r\nX-Evil: 1")])
        do {
            _ = try await engine.perform(request)
            Issue.record("the request was sent")
        } catch let error as TransferError {
            #expect(error.message == "the header Content-Type was not sent: it holds a control character (U+000D)")
        }
    }
}
