// libFuzzer harness: SigV4 canonicalisation of hostile keys, queries and headers. Input, cut at
// NUL bytes: the object key (path), then query name/value pairs up to an empty field, then
// header name/value pairs. Build and run: scripts/fuzz.sh sigv4.
import FuzzSupport
import Foundation
@testable import SigV4

let credentials = Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
let signers = [
    Signer(credentials: credentials, region: "auto"),
    Signer(credentials: credentials, region: "us-east-1", service: "service"),  // normalises paths, encodes twice
]
let date = Date(timeIntervalSince1970: 1_795_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var parts = fields(data, size, count: 1)[...]
    let path = "/bucket/" + (parts.popFirst() ?? "")
    var query: [(name: String, value: String)] = []
    while let name = parts.popFirst(), !name.isEmpty { query.append((name, parts.popFirst() ?? "")) }
    var headers: [(name: String, value: String)] = []
    while let name = parts.popFirst() { headers.append((name, parts.popFirst() ?? "")) }

    let request = SigningRequest(method: "PUT", host: "127.0.0.1:8333", path: path, query: query, headers: headers)
    let wirePath = request.encodedPath
    checkEncoded(wirePath, keeping: "/")
    precondition(decoded(wirePath) == Array(request.path.utf8), "the wire path does not decode to the key")
    let wireQuery = request.encodedQuery
    for item in wireQuery.split(separator: "&") {
        let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        precondition(pair.count == 2, "a query item without '=': \(item)")
        checkEncoded(String(pair[0]), keeping: "")
        checkEncoded(String(pair[1]), keeping: "")
    }
    precondition(wireQuery.split(separator: "&").count == query.count, "query items lost or split")

    for signer in signers {
        let first = signer.headerSigning(request, payload: .unsigned, date: date)
        let again = signer.headerSigning(request, payload: .unsigned, date: date)
        precondition(first.canonicalRequest == again.canonicalRequest && first.signature == again.signature, "signing is not deterministic")
        // No field may add a line to the canonical request: one line each for method, path,
        // query, each header, the blank line, the signed names and the payload hash.
        let headerBlock = signer.canonicalHeaders(
            host: request.host, headers: request.headers + first.items.filter { $0.name != "Authorization" })
        let headerLines = headerBlock.lines.utf8.filter { $0 == 0x0A }.count
        let lines = first.canonicalRequest.utf8.filter { $0 == 0x0A }.count
        precondition(lines == 5 + headerLines, "a field added a line to the canonical request")
        precondition(first.signature.utf8.count == 64 && first.signature.utf8.allSatisfy(isLowerHex), "a signature that is not 64 hex digits")
        for item in first.items {
            precondition(!item.value.utf8.contains(0x0A) && !item.value.utf8.contains(0x0D), "a line break in a signed header value")
        }
        do throws(SigV4Error) {
            let presigned = try signer.querySigning(request, expires: 3600, date: date, payload: .unsigned)
            precondition(presigned.items.last?.name == "X-Amz-Signature")
        } catch {
            preconditionFailure("presigning for an hour failed: \(error)")
        }
    }
    return 0
}

func isLowerHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }

/// Every byte of `text` is unreserved, one of `keeping`, or a `%XX` escape with upper-case hex.
func checkEncoded(_ text: String, keeping: String) {
    let bytes = Array(text.utf8)
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%") {
            precondition(index + 2 < bytes.count, "a cut escape in \(text)")
            for digit in bytes[(index + 1)...(index + 2)] {
                precondition((0x30...0x39).contains(digit) || (0x41...0x46).contains(digit), "an escape that is not upper-case hex in \(text)")
            }
            index += 3
            continue
        }
        let unreserved = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || "-._~".utf8.contains(byte)
        precondition(unreserved || keeping.utf8.contains(byte), "byte \(byte) left unencoded in \(text)")
        index += 1
    }
}

/// Percent-decoding of an encoded path.
func decoded(_ text: String) -> [UInt8] {
    let bytes = Array(text.utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
            let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
            out.append(value)
            index += 3
        } else {
            out.append(bytes[index])
            index += 1
        }
    }
    return out
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzSigV4_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
