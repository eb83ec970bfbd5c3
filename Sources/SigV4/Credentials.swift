/// An access key pair, with the session token that temporary credentials carry.
///
/// Printing or dumping a value shows the access key ID only: the secret and the token are masked, so
/// credentials can appear in logs and error messages without leaking.
public struct Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID, e.g. `AKIAIOSFODNN7EXAMPLE`.
    public var accessKeyID: String
    /// The secret access key; it only ever leaves this value as HMAC input.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// Creates credentials from an access key pair and an optional session token.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// `Credentials(accessKeyID: AKIA…, secretAccessKey: <redacted>)`, plus a masked token when there is one.
    public var description: String {
        let token = sessionToken == nil ? "" : ", sessionToken: <redacted>"
        return "Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>\(token))"
    }

    /// The same masked text as `description`: `dump` and `debugPrint` must not leak the secret either.
    public var debugDescription: String { description }

    /// Masked children, so `dump` and debuggers that walk the mirror do not show the secret either.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [("accessKeyID", accessKeyID), ("secretAccessKey", "<redacted>")]
        if sessionToken != nil { children.append(("sessionToken", "<redacted>")) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}
