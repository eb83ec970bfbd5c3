// libFuzzer harness: a reply's header block as curl hands it over, line by line, then what the
// client reads from it (HEAD's size and ETag, an upload's ETag, a range, dates) and the
// classification of an error reply. Input: header lines, a blank line, then the body.
// Build and run: scripts/fuzz.sh reply-head.
import FuzzSupport
import Foundation
import R2UpModel
@testable import R2UpTransfer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The body starts after the first empty line ("\n\n" or "\r\n\r\n").
    var split = bytes.count
    for index in bytes.indices.dropFirst() where bytes[index] == 0x0A {
        if bytes[index - 1] == 0x0A || (index >= 3 && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A) {
            split = index + 1
            break
        }
    }
    var status = 0
    var headers: [(name: String, value: String)] = []
    for line in bytes[..<split].split(separator: 0x0A, omittingEmptySubsequences: true) {
        switch Array(line).withUnsafeBufferPointer({ HeaderLine($0) }) {
        case .status(let code)?:
            precondition((0..<1000).contains(code), "a status code outside 0...999")
            status = code
            headers.removeAll()
        case .field(let name, let value)?:
            // Lookups use ASCII names; non-ASCII bytes are no header S3 sends and stay as they are.
            precondition(!name.utf8.contains(where: { (0x41...0x5A).contains($0) }), "a header name not lower-cased")
            headers.append((name, value))
        case nil: break
        }
    }
    let body = Array(bytes[split...])
    let response = HTTPResponse(status: status, headers: headers, body: body, bodyBytesReceived: Int64(body.count))
    do throws(S3ClientError) {
        let info = try S3Client.objectInfo(response)
        precondition(info.size >= 0, "a HEAD with a negative size was accepted")
        precondition(!info.etag.isEmpty, "a HEAD without an ETag was accepted")
    } catch {
        classify(error)
    }
    do throws(S3ClientError) {
        let etag = try S3Client.requiredETag(response)
        precondition(!etag.isEmpty, "an empty upload ETag was accepted")
    } catch {
        classify(error)
    }
    let range = response.header("content-range") ?? ""
    if ContentRange.matches(range, 0...4) {
        // RFC 9110: positions are digits (leading zeros allowed), then "/" and a length or "*".
        let halves = range.trimmingCharacters(in: .whitespaces).dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        let ends = halves[0].split(separator: "-", omittingEmptySubsequences: false).map { $0.drop { $0 == "0" } }
        precondition(halves.count == 2 && ends.count == 2 && ends[0].isEmpty && ends[1] == "4", "a range taken for 0-4: \(range)")
    }
    for name in ["date", "last-modified"] {
        if let date = response.header(name).flatMap(HTTPDate.parse) {
            precondition(date.timeIntervalSince1970.isFinite)
        }
    }
    if !(200..<300).contains(status) {
        let error = S3ServiceError(response: response)
        classify(.service(error))
    }
    return 0
}

/// The classification a run makes of the error: a kind, a scope and one line.
func classify(_ error: S3ClientError) {
    let failure = Failure(error, subject: "fuzz.m4a")
    precondition(!failure.diagnosis.message.isEmpty, "an S3 failure classified with no message")
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzReplyHead_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
