import Foundation
import Testing

@testable import SigV4

/// One case of the AWS SigV4 test suite; the table is in AWSSuiteCases.swift.
struct SuiteCase: Sendable, CustomTestStringConvertible {
    /// Cases that do not fit r2up's request model as they stand, and what the test does about it.
    enum Handling: Sendable {
        /// The request-line path is not a valid wire path (raw space or UTF-8), so it cannot be given decoded;
        /// the test hands it to the stage functions as the wire path.
        case rawRequestPath
        /// The suite signs Content-Length; r2up's signer never does unless a test allows it.
        case signsContentLength
        /// `omit_session_token`: the token is attached after signing, so it is not part of the signature.
        case tokenAddedAfterSigning
    }

    /// The expected output of one signing form.
    struct Expected: Sendable {
        let canonicalRequest: String
        /// The last line of the string to sign; the first three are common to every case.
        let stringToSignHash: String
        let signature: String

        var stringToSign: String {
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\(stringToSignHash)"
        }

        /// The signed-header list, the next-to-last line of the canonical request.
        var signedHeaders: String {
            let lines = canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.count >= 2 ? String(lines[lines.count - 2]) : ""
        }

        /// The query line of the canonical request, split into its items.
        var canonicalQueryItems: [String] {
            let lines = canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count >= 3, !lines[2].isEmpty else { return [] }
            return lines[2].split(separator: "&").map(String.init)
        }
    }

    let name: String
    let normalize: Bool
    let method: String
    /// The request-line path, taken as the decoded path (it holds no `%` escapes).
    let path: String
    let query: [(name: String, value: String)]
    /// Headers other than Host, which is always example.amazonaws.com.
    let headers: [(name: String, value: String)]
    var body: String? = nil
    var token: String? = nil
    var handling: Set<Handling> = []
    let headerForm: Expected
    let queryForm: Expected

    var testDescription: String { name }

    static let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let accessKeyID = "AKIDEXAMPLE"
    static let secretAccessKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    var signer: Signer {
        let token = handling.contains(.tokenAddedAfterSigning) ? nil : token
        var signer = Signer(
            credentials: Credentials(accessKeyID: Self.accessKeyID, secretAccessKey: Self.secretAccessKey, sessionToken: token),
            region: "us-east-1", service: "service", normalizePath: normalize)
        if handling.contains(.signsContentLength) { signer.unsignedHeaders.remove("content-length") }
        return signer
    }

    var request: SigningRequest {
        SigningRequest(method: method, host: "example.amazonaws.com", path: path, query: query, headers: headers)
    }

    /// The body's hash when the suite signs the body, else the empty body's (none of these requests has one).
    var payload: PayloadHash {
        guard let body else { return .empty }
        return .sha256(hex: Digest.sha256Hex(Array(body.utf8)))
    }

    var wirePath: String? { handling.contains(.rawRequestPath) ? path : nil }
}

/// `name: value` lines, to compare header and query lists (tuples are not Equatable).
func lines(_ items: [(name: String, value: String)]) -> [String] {
    items.map { "\($0.name): \($0.value)" }
}
