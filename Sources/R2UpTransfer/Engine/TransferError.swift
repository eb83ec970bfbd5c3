internal import CCurl
import Foundation

/// A transfer that did not produce an HTTP response: the network, TLS, a timeout, the local file.
public struct TransferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the terms the retry rules need.
    public enum Kind: String, Sendable, Equatable {
        case connectionRefused, connectionReset, timeout, dnsFailure, tlsFailure
        case malformedURL, responseTooLarge, fileReadFailed, fileShorterThanExpected, fileWriteFailed
        /// A reply body longer than the bytes asked for (`ResponseSink.file`'s limit).
        case responseLongerThanAsked
        /// The body was held and its gate refused it (`BodyGate`): the request was never whole.
        case bodyWithheld
        case cancelled, other
    }

    public var kind: Kind
    /// libcurl's CURLcode, 0 when the failure was ours.
    public var curlCode: Int
    /// errno from the socket layer, when curl reported one.
    public var osErrno: Int32
    /// curl's own words for it (never contains credentials: curl does not see them in the URL).
    public var message: String

    public init(kind: Kind, curlCode: Int = 0, osErrno: Int32 = 0, message: String) {
        self.kind = kind
        self.curlCode = curlCode
        self.osErrno = osErrno
        self.message = message
    }

    public var description: String { message }

    /// Classifies a finished easy handle's result.
    static func from(code: CURLcode, osErrno: Int32, detail: String) -> TransferError {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let kind: Kind
        switch code {
        case CURLE_COULDNT_CONNECT:
            kind = osErrno == ECONNREFUSED || osErrno == 0 ? .connectionRefused : .connectionReset
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            kind = .dnsFailure
        case CURLE_OPERATION_TIMEDOUT:
            kind = .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            kind = .tlsFailure
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            kind = .malformedURL
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2,
            CURLE_HTTP2_STREAM, CURLE_WEIRD_SERVER_REPLY:
            kind = .connectionReset
        default:
            kind = .other
        }
        return TransferError(kind: kind, curlCode: Int(code.rawValue), osErrno: osErrno, message: text)
    }
}
