import Foundation
import Testing

@testable import SigV4

/// The worked S3 examples from AWS's documentation:
/// "Signature Calculations for the Authorization Header: Transferring Payload in a Single Chunk"
/// (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html) and
/// "Authenticating Requests: Using Query Parameters"
/// (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html).
@Suite("S3 documentation examples")
struct S3DocumentationTests {
    static let signer = Signer(
        credentials: Credentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    static let date = Date(timeIntervalSince1970: 1_369_353_600)  // 20130524T000000Z
    static let host = "examplebucket.s3.amazonaws.com"
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Signs in the header form and checks each stage, then the Authorization header.
    func check(
        _ request: SigningRequest, payload: PayloadHash, canonicalRequest: String, stringToSign: String,
        signature: String
    ) throws {
        let result = Self.signer.headerSigning(request, payload: payload, date: Self.date)
        try #require(result.canonicalRequest == canonicalRequest, "stage 1: canonical request")
        try #require(result.stringToSign == stringToSign, "stage 2: string to sign")
        try #require(result.signature == signature, "stage 4: signature")

        let signedHeaders = canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false).dropLast().last ?? ""
        let headers = Self.signer.sign(request, payload: payload, date: Self.date)
        #expect(
            lines(headers) == [
                "x-amz-date: 20130524T000000Z",
                "x-amz-content-sha256: \(payload.headerValue)",
                "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                    + "SignedHeaders=\(signedHeaders), Signature=\(signature)",
            ])
    }

    @Test("GET Object with a Range header")
    func getObject() throws {
        try check(
            SigningRequest(method: "GET", host: Self.host, path: "/test.txt", headers: [("Range", "bytes=0-9")]),
            payload: .empty,
            canonicalRequest: """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """,
            signature: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("PUT Object with a Date header and a storage class")
    func putObject() throws {
        let body = Array("Welcome to Amazon S3.".utf8)
        let request = SigningRequest(
            method: "PUT", host: Self.host, path: "/test$file.text",
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")])
        #expect(request.encodedPath == "/test%24file.text")
        try check(
            request, payload: .sha256(hex: Digest.sha256Hex(body)),
            canonicalRequest: """
                PUT
                /test%24file.text

                date:Fri, 24 May 2013 00:00:00 GMT
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
                x-amz-date:20130524T000000Z
                x-amz-storage-class:REDUCED_REDUNDANCY

                date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class
                44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d
                """,
            signature: "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test("GET Bucket lifecycle (a valueless query item)")
    func getBucketLifecycle() throws {
        try check(
            SigningRequest(method: "GET", host: Self.host, path: "/", query: [("lifecycle", "")]),
            payload: .empty,
            canonicalRequest: """
                GET
                /
                lifecycle=
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca
                """,
            signature: "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test("GET Bucket (list objects) with its query items given out of order")
    func listObjects() throws {
        try check(
            SigningRequest(method: "GET", host: Self.host, path: "/", query: [("prefix", "J"), ("max-keys", "2")]),
            payload: .empty,
            canonicalRequest: """
                GET
                /
                max-keys=2&prefix=J
                host:examplebucket.s3.amazonaws.com
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            stringToSign: """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7
                """,
            signature: "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test("presigned GET Object valid for 86400 s")
    func presignedGetObject() throws {
        let request = SigningRequest(method: "GET", host: Self.host, path: "/test.txt")
        let result = try Self.signer.querySigning(request, expires: 86_400, date: Self.date, payload: .unsigned)
        try #require(
            result.canonicalRequest == """
                GET
                /test.txt
                X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host
                host:examplebucket.s3.amazonaws.com

                host
                UNSIGNED-PAYLOAD
                """, "stage 1: canonical request")
        try #require(
            result.stringToSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04
                """, "stage 2: string to sign")
        try #require(
            result.signature == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", "stage 4: signature")

        // The URL a client builds from presign(): the same items, encoded and sorted.
        var signed = request
        signed.query = try Self.signer.presign(request, expires: 86_400, date: Self.date)
        let expected =
            "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
            + "&X-Amz-SignedHeaders=host"
        let url = "https://\(signed.host)\(signed.encodedPath)?\(signed.encodedQuery)"
        #expect(url == expected)
    }
}
