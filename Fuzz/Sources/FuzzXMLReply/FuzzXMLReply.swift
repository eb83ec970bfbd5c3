// libFuzzer harness: an S3 XML reply body through every parser the client runs on one
// (listing, error, multipart, copy) and the failure classification of what they throw.
// Input: the body's bytes. Build and run: scripts/fuzz.sh xml-reply.
import FuzzSupport
import R2UpModel
@testable import R2UpTransfer

let roots = [
    "ListBucketResult", "InitiateMultipartUploadResult", "CompleteMultipartUploadResult", "ListPartsResult",
    "ListMultipartUploadsResult", "CopyObjectResult", "CopyPartResult", "Error",
]

/// One input; a broken invariant traps, which libFuzzer records as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let body = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let ok = HTTPResponse(status: 200, headers: [("content-type", "application/xml")], body: body, bodyBytesReceived: Int64(size))
    if let node = XMLNode.parse(body) {
        walk(node, depth: 0)
    }
    for root in roots {
        do throws(S3ClientError) {
            let node = try S3Client.document(ok, root: root)
            precondition(node.name == root, "document() returned <\(node.name)> for <\(root)>")
        } catch {
            classify(error)
        }
    }
    do throws(S3ClientError) {
        let listing = try S3Client.listing(ok)
        for object in listing.objects {
            precondition(!object.key.isEmpty, "a listing entry with an empty key was accepted")
            precondition(object.size >= 0, "a listing entry with a negative size was accepted")
        }
        if let token = listing.continuationToken { precondition(!token.isEmpty, "an empty continuation token") }
    } catch {
        classify(error)
    }
    for root in ["CopyObjectResult", "CopyPartResult"] {
        do throws(S3ClientError) {
            let etag = try S3Client.copyETag(ok, root: root)
            precondition(!etag.isEmpty, "a copy reply with an empty ETag was accepted")
        } catch {
            classify(error)
        }
    }
    for status in [400, 403, 404, 409, 412, 500, 503] {
        let failed = HTTPResponse(status: status, headers: [], body: body, bodyBytesReceived: Int64(size))
        let error = S3ServiceError(response: failed)
        precondition(error.status == status)
        classify(.service(error))
    }
    return 0
}

/// Reads every field the client reads from a node, dates included.
func walk(_ node: XMLNode, depth: Int) {
    precondition(depth <= 65, "XML nesting deeper than the reader allows")
    _ = ISO8601.parse(node.text)
    for child in node.children { walk(child, depth: depth + 1) }
}

/// The classification a run makes of the error: a kind, a scope and one line.
func classify(_ error: S3ClientError) {
    let failure = Failure(error, subject: "fuzz.m4a")
    precondition(!failure.diagnosis.message.isEmpty, "an S3 failure classified with no message")
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzXMLReply_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
