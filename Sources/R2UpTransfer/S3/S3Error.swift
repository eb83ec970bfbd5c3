import Foundation

/// An error reply from the S3 service.
public struct S3ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    /// The S3 error code, such as `NoSuchBucket`; empty when the reply had no XML body (HEAD).
    public var code: String
    public var message: String
    public var requestID: String?
    /// The server's `Date` header, used to correct clock skew.
    public var serverDate: String?
    /// The code was named from the status alone: the reply had no body (a HEAD's), so it does
    /// not say why (a 403 may be a wrong secret as well as a missing permission).
    public var codeFromStatus = false

    public var description: String {
        let what = code.isEmpty ? "HTTP \(status)" : "\(code) (HTTP \(status))"
        return message.isEmpty ? what : "\(what): \(message)"
    }

    /// Builds the error from a non-2xx response.
    init(response: HTTPResponse) {
        status = response.status
        requestID = response.header("x-amz-request-id")
        serverDate = response.header("date")
        // A page of text that is not S3 (a web server's "404 page not found"): the endpoint is
        // not S3, whatever its status would name.
        var isPage = false
        if let root = XMLNode.parse(response.body), root.name == "Error" {
            code = root.value("Code") ?? ""
            message = root.value("Message") ?? ""
            requestID = root.value("RequestId") ?? requestID
        } else {
            code = ""
            message = ""
            if !response.body.isEmpty {
                // Not S3 at all (an HTML page, a proxy's error): say so, briefly; a body that
                // is not text (an object's bytes under an error status) is only counted.
                let head = response.body.prefix(120)
                let decoded = String(decoding: head, as: UTF8.self)
                // At most one replacement character: the cut at 120 bytes may split one.
                let isText = !head.contains { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) || $0 == 0x7F }
                    && decoded.unicodeScalars.filter { $0 == "\u{FFFD}" }.count <= 1
                let text = isText
                    ? decoded.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
                    : "\(response.body.count) bytes that are not text"
                message = "the reply is not an S3 error document: \(text)"
                isPage = isText
            }
        }
        if code.isEmpty && !isPage {
            // HEAD replies carry no body; name the common cases the way S3 would.
            switch status {
            case 403: code = "AccessDenied"
            case 404: code = "NotFound"
            default: break
            }
            codeFromStatus = !code.isEmpty
        }
    }

    public init(status: Int, code: String, message: String, requestID: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
    }
}

/// Everything an S3 call can fail with.
public enum S3ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No HTTP reply: network, TLS, timeout, local file.
    case transfer(TransferError)
    /// The service answered with an error.
    case service(S3ServiceError)
    /// The service answered 2xx with something r2up cannot read.
    case unexpectedResponse(String)

    public var description: String {
        switch self {
        case .transfer(let error): return error.description
        case .service(let error): return error.description
        case .unexpectedResponse(let text): return "unexpected reply from the server: \(text)"
        }
    }

}

extension S3ClientError {
    /// Wraps an error from an untyped context: S3 errors pass through, anything else was a cancellation.
    init(_ error: any Error) {
        self = error as? S3ClientError ?? .transfer(TransferError(kind: .cancelled, message: "cancelled"))
    }
}
