import Foundation
import R2UpTestSupport
import Testing
import FoundationEssentials
@testable import R2UpModel
@testable import R2UpTransfer

/// Issue 15: seeded mutations of real S3 replies (captured from SeaweedFS 4.48 with boto3) go
/// through the parsers the client uses on every reply. None may trap, and whatever they accept
/// must hold what S3 sends: a HEAD's size and ETag, a listing's keys and sizes, a token when
/// truncated. Deterministic: the same seeds give the same mutations on every run.
@Suite("Fuzzing S3 reply parsers")
struct ReplyFuzzTests {
    /// 10,240 mutations in all: 5,120 header blocks and 5,120 XML bodies.
    static let mutationsPerFixture = 640

    @Test("mutated header blocks: no trap; an accepted HEAD has a size and an ETag; a 206 range is exact")
    func headerBlocks() {
        var random = SplitMix64(seed: 0x15_4EAD)
        var accepted = 0
        var tried = 0
        for block in Self.headerBlocks {
            for _ in 0..<Self.mutationsPerFixture {
                let mutated = Mutator.mutate(Array(block.utf8), random: &random, interesting: Self.interestingHeaderBytes)
                let response = Self.response(fromHeaderBlock: mutated, body: [])
                tried += 1
                if let info = try? S3Client.objectInfo(response) {
                    accepted += 1
                    #expect(info.size >= 0)
                    #expect(!info.etag.isEmpty)
                }
                if let etag = try? S3Client.requiredETag(response) { #expect(!etag.isEmpty) }
                let range = response.header("content-range") ?? ""
                if ContentRange.matches(range, 0...4) {
                    #expect(range.hasPrefix("bytes ") && range.contains("0-4"))
                }
                for name in ["date", "last-modified"] {
                    if let date = response.header(name).flatMap(HTTPDate.parse) {
                        #expect(date.timeIntervalSince1970.isFinite)
                    }
                }
                _ = S3ServiceError(response: response)
            }
        }
        #expect(tried == Self.headerBlocks.count * Self.mutationsPerFixture)
        // Many mutations leave the head usable: the fuzz reaches the success path, not only the errors.
        #expect(accepted > 100)
    }

    @Test("mutated XML bodies: no trap; an accepted listing has keys, sizes and a token when truncated")
    func xmlBodies() {
        var random = SplitMix64(seed: 0x15_B0D7)
        var listings = 0
        for (root, body) in Self.bodies {
            for _ in 0..<Self.mutationsPerFixture {
                let mutated = Mutator.mutate(Array(body.utf8), random: &random, interesting: Self.interestingXMLBytes)
                let response = HTTPResponse(
                    status: 200, headers: [("content-type", "application/xml")], body: mutated,
                    bodyBytesReceived: Int64(mutated.count))
                _ = try? S3Client.document(response, root: root)
                _ = S3ServiceError(response: HTTPResponse(status: 404, headers: [], body: mutated, bodyBytesReceived: 0))
                if let listing = try? S3Client.listing(response) {
                    listings += 1
                    for object in listing.objects {
                        #expect(!object.key.isEmpty)
                        #expect(object.size >= 0)
                    }
                    if let token = listing.continuationToken { #expect(!token.isEmpty) }
                }
                if let node = XMLNode.parse(mutated) {
                    for child in node.children("Contents") {
                        _ = child.value("LastModified").flatMap(ISO8601.parse)
                    }
                }
            }
        }
        #expect(listings > 50)
    }

    @Test("dates far beyond year 9999 are refused, not trapped on", arguments: [
        "Sun, 22 Nov 300000000000 21:00:00 GMT", "Sun, 22 Nov 9223372036854775807 21:00:00 GMT",
        "Sun, 22 Nov -9223372036854775808 21:00:00 GMT", "Sun, 22 Nov 10000 21:00:00 GMT", "Sun, 22 Nov 0 21:00:00 GMT",
    ])
    func farDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
        let iso = text.split(separator: " ")[3] + "-11-22T21:00:00.000Z"
        #expect(ISO8601.parse(String(iso)) == nil)
    }

    @Test("the edges of the date range still parse")
    func dateEdges() {
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT")?.timeIntervalSince1970 == 253_402_300_799)
        #expect(ISO8601.parse("0001-01-01T00:00:00Z")?.timeIntervalSince1970 == -62_135_596_800)
    }

    // MARK: - Fixtures and helpers

    /// Header lines as libcurl hands them over, one callback per line, into the same parser.
    static func response(fromHeaderBlock bytes: [UInt8], body: [UInt8]) -> HTTPResponse {
        var status = 0
        var headers: [(name: String, value: String)] = []
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
            let parsed = Array(line).withUnsafeBufferPointer { HeaderLine($0) }
            switch parsed {
            case .status(let code)?:
                status = code
                headers.removeAll()
            case .field(let name, let value)?: headers.append((name, value))
            case nil: break
            }
        }
        return HTTPResponse(status: status, headers: headers, body: body, bodyBytesReceived: Int64(body.count))
    }

    static let interestingHeaderBytes: [[UInt8]] = [
        Array("\r\n".utf8), Array(":".utf8), Array("\"".utf8), [0], [0xFF], Array("99999999999999999999".utf8),
        Array("-1".utf8), Array("300000000000".utf8), Array("bytes 1-5/11".utf8), Array("HTTP/1.1 200 OK\r\n".utf8),
        Array("Content-Length: ".utf8), Array("ETag: ".utf8), Array(" ".utf8),
    ]

    static let interestingXMLBytes: [[UInt8]] = [
        Array("<".utf8), Array(">".utf8), Array("&".utf8), Array("&#34;".utf8), Array("&#x0;".utf8), [0], [0xC3],
        Array("</Contents>".utf8), Array("<IsTruncated>true</IsTruncated>".utf8), Array("<Size>-5</Size>".utf8),
        Array("99999999999999999999".utf8), Array("300000000000-11-24T04:21:51Z".utf8), Array("<![CDATA[".utf8),
        Array("<!DOCTYPE x [<!ENTITY a \"aaaa\">]>".utf8),
    ]

    static let headerBlocks: [String] = [
        """
        HTTP/1.1 200 OK\r
        Accept-Ranges: bytes\r
        Content-Length: 0\r
        ETag: "5eb63bbbe01eeed093cb22bb8f5acdc3"\r
        Server: SeaweedFS 8000GB 4.48\r
        X-Amz-Checksum-Crc32: DUoRhQ==\r
        X-Amz-Request-Id: 18EAE06F4B16A98456EE61A7\r
        Date: Tue, 24 Nov 2026 04:22:50 GMT\r

        """,
        """
        HTTP/1.1 200 OK\r
        Accept-Ranges: bytes\r
        Content-Length: 11\r
        Content-Type: text/plain; charset=utf-8\r
        Etag: "5eb63bbbe01eeed093cb22bb8f5acdc3"\r
        Last-Modified: Tue, 24 Nov 2026 04:22:50 GMT\r
        Seaweed-X-Amz-ETag: 5eb63bbbe01eeed093cb22bb8f5acdc3\r
        Server: SeaweedFS 8000GB 4.48\r
        X-Amz-Request-Id: 18EAE06F4B5A01C908A29AD3\r
        Date: Tue, 24 Nov 2026 04:22:50 GMT\r

        """,
        """
        HTTP/1.1 206 Partial Content\r
        Accept-Ranges: bytes\r
        Content-Length: 5\r
        Content-Range: bytes 0-4/11\r
        Content-Type: text/plain; charset=utf-8\r
        Etag: "5eb63bbbe01eeed093cb22bb8f5acdc3"\r
        Last-Modified: Tue, 24 Nov 2026 04:22:50 GMT\r
        Date: Tue, 24 Nov 2026 04:22:50 GMT\r

        """,
        """
        HTTP/1.1 100 Continue\r
        \r
        HTTP/1.1 200 OK\r
        Content-Length: 0\r
        ETag: "336311a016184326ddbdd61edd4eeb52"\r
        X-Amz-Request-Id: 18EAE06F4C2FE86DD7E689C4\r
        Date: Tue, 24 Nov 2026 04:22:50 GMT\r

        """,
        """
        HTTP/1.1 403 Forbidden\r
        Content-Type: application/xml\r
        Content-Length: 0\r
        x-amz-request-id: FAULTPROXY00000001\r
        Date: Tue, 24 Nov 2026 04:42:50 GMT\r

        """,
        """
        HTTP/1.1 200 OK\r
        Content-Length: 316\r
        Content-Type: application/xml\r
        Server: SeaweedFS 8000GB 4.48\r
        Date: Tue, 24 Nov 2026 04:22:50 GMT\r

        """,
        """
        HTTP/2 200 \r
        content-length: 11\r
        etag: "5eb63bbbe01eeed093cb22bb8f5acdc3"\r
        last-modified: Tue, 24 Nov 2026 04:22:50 GMT\r
        cf-ray: 8e0c1c2d3e4f5a6b-AMS\r

        """,
        """
        HTTP/1.1 201 Created\r
        Content-Md5: sCYyTGkEsqnLS4jW1hyB0Q==\r
        Content-Type: application/json\r
        Server: SeaweedFS 8000GB 4.48\r
        Content-Length: 25\r

        """,
    ]

    static let bodies: [(root: String, body: String)] = [
        ("ListBucketResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>r2up-test</Name><Prefix>t15/</Prefix><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated><Contents><Key>t15/ch.m4a</Key><ETag>&#34;26ab0db90d72e28ad0ba1e22ee510510&#34;</ETag><Size>2</Size><StorageClass>STANDARD</StorageClass><LastModified>2026-11-24T04:21:51Z</LastModified></Contents><Contents><Key>t15/de.m4a</Key><ETag>&#34;26ab0db90d72e28ad0ba1e22ee510510&#34;</ETag><Size>2</Size><StorageClass>STANDARD</StorageClass><LastModified>2026-11-24T04:21:51Z</LastModified></Contents><NextContinuationToken>t15/de.m4a</NextContinuationToken><EncodingType>url</EncodingType><KeyCount>2</KeyCount></ListBucketResult>
            """),
        ("ListBucketResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>r2up-test</Name><Prefix>t15/</Prefix><MaxKeys>3</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated><Contents><Key>t15/f1.m4a</Key><ETag>&#34;b026324c6904b2a9cb4b88d6d61c81d1&#34;</ETag><Size>2</Size><StorageClass>STANDARD</StorageClass><LastModified>2026-11-24T04:20:40Z</LastModified></Contents><CommonPrefixes><Prefix>t15/live/</Prefix></CommonPrefixes><KeyCount>2</KeyCount></ListBucketResult>
            """),
        ("InitiateMultipartUploadResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>r2up-test</Bucket><Key>fx/m.flac</Key><UploadId>02f7757903c31d6dcb1746494e971215853b2fe8_c7a3754581d84f92a72837dbf5c0620d</UploadId></InitiateMultipartUploadResult>
            """),
        ("ListPartsResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>r2up-test</Bucket><IsTruncated>false</IsTruncated><Key>fx/m.flac</Key><MaxParts>10000</MaxParts><PartNumberMarker>0</PartNumberMarker><Part><ETag>&#34;336311a016184326ddbdd61edd4eeb52&#34;</ETag><LastModified>2026-11-24T04:22:50Z</LastModified><PartNumber>1</PartNumber><Size>10</Size></Part><StorageClass>STANDARD</StorageClass><UploadId>02f7757903c31d6dcb1746494e971215853b2fe8_c7a3754581d84f92a72837dbf5c0620d</UploadId></ListPartsResult>
            """),
        ("CompleteMultipartUploadResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>http://127.0.0.1:19506/r2up-test/fx/m.flac</Location><Bucket>r2up-test</Bucket><Key>fx/m.flac</Key><ETag>&#34;cb8d7289925309a05b2db09b7709c264-1&#34;</ETag></CompleteMultipartUploadResult>
            """),
        ("Error", """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Resource>/r2up-test/fx/none</Resource><RequestId>18EAE06F4CBAA1A713A1D813</RequestId><Key>fx/none</Key><BucketName>r2up-test</BucketName></Error>
            """),
        ("ListMultipartUploadsResult", """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>r2up-test</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker>fx/m.flac</NextKeyMarker><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated><Upload><Key>fx/m.flac</Key><UploadId>02f77579</UploadId><Initiated>2026-11-24T04:22:50Z</Initiated></Upload></ListMultipartUploadsResult>
            """),
        ("ListBucketResult", """
            <!DOCTYPE html><html><head><title>Welcome</title></head><body>It works!</body></html>
            """),
    ]
}

/// Byte-level mutations: flips, cuts, duplications, insertions of bytes parsers choke on.
enum Mutator {
    static func mutate<R: RandomNumberGenerator>(_ input: [UInt8], random: inout R, interesting: [[UInt8]]) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !bytes.isEmpty else { bytes = interesting.randomElement(using: &random) ?? []; continue }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...64, using: &random)))
            case 3: bytes = Array(bytes[..<at])  // cut short, as a dropped connection leaves it
            case 4:
                let end = min(bytes.count, at + Int.random(in: 1...80, using: &random))
                bytes.insert(contentsOf: bytes[at..<end], at: end)
            case 5: bytes.insert(contentsOf: interesting.randomElement(using: &random) ?? [], at: at)
            default:
                // Replace a run of digits with another number (huge, negative, empty).
                var end = at
                while end < bytes.count, (0x30...0x39).contains(bytes[end]) { end += 1 }
                let numbers = ["", "0", "-1", "99999999999999999999", "300000000000", "9223372036854775808"]
                bytes.replaceSubrange(at..<end, with: Array((numbers.randomElement(using: &random) ?? "").utf8))
            }
        }
        return bytes
    }
}
