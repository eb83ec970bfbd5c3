import Testing

@testable import SigV4

@Suite("Paths, queries and headers in canonical form")
struct EncodingTests {
    static let s3 = Signer(credentials: Credentials(accessKeyID: "id", secretAccessKey: "secret"), region: "auto")
    static let other = Signer(
        credentials: Credentials(accessKeyID: "id", secretAccessKey: "secret"), region: "us-east-1", service: "service")

    @Test("a key full of special characters is encoded once, byte by byte")
    func specialKey() {
        let request = SigningRequest(method: "PUT", host: "h", path: "/b/a b+c%#?&=\u{E9}\u{1F3B5}")
        #expect(request.encodedPath == "/b/a%20b%2Bc%25%23%3F%26%3D%C3%A9%F0%9F%8E%B5")
        // S3 signs exactly that wire path.
        #expect(Self.s3.canonicalPath(wirePath: request.encodedPath) == request.encodedPath)
    }

    @Test("unreserved characters and slashes stay as they are")
    func unreservedKept() {
        let path = "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/dir/"
        #expect(SigningRequest(method: "GET", host: "h", path: path).encodedPath == path)
        #expect(URIEncoding.encode("a/b") == "a%2Fb")
    }

    @Test("an empty path is /, a path without a leading slash gets one")
    func pathEdges() {
        #expect(SigningRequest(method: "GET", host: "h", path: "").encodedPath == "/")
        var request = SigningRequest(method: "GET", host: "h", path: "/")
        request.path = "key"
        #expect(request.encodedPath == "/key")
    }

    @Test("S3 keeps dot segments and repeated slashes; other services normalise and encode again")
    func pathRules() {
        let request = SigningRequest(method: "GET", host: "h", path: "/a//b/../c/./d e%")
        #expect(Self.s3.canonicalPath(wirePath: request.encodedPath) == "/a//b/../c/./d%20e%25")
        #expect(Self.other.canonicalPath(wirePath: request.encodedPath) == "/a/c/d%2520e%2525")
    }

    @Test(
        "normalisation",
        arguments: [
            ("/", "/"), ("//", "/"), ("/./", "/"), ("/..", "/"), ("/../..", "/"), ("/a/..", "/"), ("/a/.", "/a/"),
            ("/a/b/../c", "/a/c"), ("//a//b//", "/a/b/"), ("/./a", "/a"), ("/a/b/../..", "/"), ("", "/"),
        ])
    func normalisation(input: String, output: String) {
        #expect(URIEncoding.normalize(input) == output)
    }

    @Test("query items are encoded, space as %20, and sorted by encoded name then value")
    func queryOrder() {
        let request = SigningRequest(
            method: "GET", host: "h", path: "/",
            query: [("b", "2"), ("a", "z"), ("a", "y"), ("\u{1234}", "1"), ("A", "x y+z"), ("uploads", "")])
        #expect(request.encodedQuery == "%E1%88%B4=1&A=x%20y%2Bz&a=y&a=z&b=2&uploads=")
        #expect(SigningRequest(method: "GET", host: "h", path: "/").encodedQuery == "")
    }

    @Test("header values are trimmed and inner whitespace runs collapse to one space")
    func trimming() {
        #expect(Signer.trimAll("  a \t b\r\n   c  ") == "a b c")
        #expect(Signer.trimAll("") == "")
        #expect(Signer.trimAll(" \t\n ") == "")
        #expect(Signer.trimAll("\"a   b\"") == "\"a b\"")
    }

    @Test("headers: lower-cased, repeated names joined in order, sorted, the never-signed ones left out")
    func canonicalHeaders() {
        let headers = Self.s3.canonicalHeaders(
            host: "bucket.example.com",
            headers: [
                ("X-Amz-Meta-B", " 2 "), ("Content-Type", "text/plain"), ("x-amz-meta-b", "1"),
                ("User-Agent", "r2up"), ("Content-Length", "10"), ("Expect", "100-continue"),
                ("Authorization", "old"), ("Transfer-Encoding", "chunked"), ("Host", "ignored.example.com"),
                ("  Content-MD5 ", "abc=="), ("", "nameless"),
            ])
        #expect(
            headers.lines
                == "content-md5:abc==\ncontent-type:text/plain\nhost:bucket.example.com\nx-amz-meta-b:2,1\n")
        #expect(headers.signedNames == "content-md5;content-type;host;x-amz-meta-b")
    }
}
