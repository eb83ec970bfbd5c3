import Foundation

// The signing pipeline, one function per stage of AWS's "Create a signed AWS API request"
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html). Internal, so tests can check
// each stage on its own and a failure names the stage that broke.

/// What one signing produced, stage by stage.
struct SigningResult: Sendable {
    /// Stage 1.
    let canonicalRequest: String
    /// Stage 2.
    let stringToSign: String
    /// Stage 4 (stage 3, the key, comes from `Signer.signingKey(day:)`).
    let signature: String
    /// Header form: the headers to add. Query form: the complete query.
    let items: [(name: String, value: String)]
}

/// The canonical header block and the signed-header list that goes with it.
struct CanonicalHeaders: Sendable, Equatable {
    /// `name:value\n` per header, sorted by name.
    let lines: String
    /// `host;range;x-amz-date`.
    let signedNames: String
}

extension Signer {
    static let algorithm = "AWS4-HMAC-SHA256"

    // MARK: - Both forms

    /// The header form; `wirePath` replaces `request.encodedPath` when a test has the wire path already.
    func headerSigning(
        _ request: SigningRequest, payload: PayloadHash, date: Date, wirePath: String? = nil
    ) -> SigningResult {
        let time = AMZDate(date)
        var added: [(name: String, value: String)] = [("x-amz-date", time.timestamp)]
        if service == "s3" { added.append(("x-amz-content-sha256", payload.headerValue)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }

        let headers = canonicalHeaders(host: request.host, headers: request.headers + added)
        let canonical = canonicalRequest(
            method: request.method, path: canonicalPath(wirePath: wirePath ?? request.encodedPath),
            query: request.encodedQuery, headers: headers, payload: payload)
        let toSign = stringToSign(canonicalRequest: canonical, time: time)
        let signature = self.signature(stringToSign: toSign, day: time.day)
        let authorization =
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(credentialScope(day: time.day)), "
            + "SignedHeaders=\(headers.signedNames), Signature=\(signature)"
        return SigningResult(
            canonicalRequest: canonical, stringToSign: toSign, signature: signature,
            items: added + [("Authorization", authorization)])
    }

    /// The query (presigned) form; `wirePath` as for `headerSigning`.
    func querySigning(
        _ request: SigningRequest, expires seconds: Int, date: Date, payload: PayloadHash, wirePath: String? = nil
    ) throws(SigV4Error) -> SigningResult {
        guard (1...604_800).contains(seconds) else { throw .expiryOutOfRange(seconds) }
        let time = AMZDate(date)
        let headers = canonicalHeaders(host: request.host, headers: request.headers)

        var signing = request
        signing.query.append(("X-Amz-Algorithm", Self.algorithm))
        signing.query.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(credentialScope(day: time.day))"))
        signing.query.append(("X-Amz-Date", time.timestamp))
        signing.query.append(("X-Amz-Expires", String(seconds)))
        signing.query.append(("X-Amz-SignedHeaders", headers.signedNames))
        // The AWS suite (get-vanilla-with-session-token) signs the token rather than appending it afterwards.
        if let token = credentials.sessionToken { signing.query.append(("X-Amz-Security-Token", token)) }

        let canonical = canonicalRequest(
            method: request.method, path: canonicalPath(wirePath: wirePath ?? request.encodedPath),
            query: signing.encodedQuery, headers: headers, payload: payload)
        let toSign = stringToSign(canonicalRequest: canonical, time: time)
        let signature = self.signature(stringToSign: toSign, day: time.day)
        return SigningResult(
            canonicalRequest: canonical, stringToSign: toSign, signature: signature,
            items: signing.query + [("X-Amz-Signature", signature)])
    }

    // MARK: - Stage 1: the canonical request

    /// The path line of the canonical request, from the path as it is sent.
    ///
    /// S3 signs the wire path itself. Other services encode it once more ("double encoding" relative to the
    /// decoded path), after normalising it if `normalizePath` is set. The AWS suite's expected paths follow
    /// exactly this rule when its request-line path is taken as the wire path.
    func canonicalPath(wirePath: String) -> String {
        var path = wirePath.isEmpty ? "/" : wirePath
        if normalizePath { path = URIEncoding.normalize(path) }
        return service == "s3" ? path : URIEncoding.encodePath(path)
    }

    /// Host from `host`, then `headers` minus the never-signed ones: names lower-cased and trimmed, values
    /// trimmed with inner whitespace runs (line breaks included) collapsed to one space, a repeated name given
    /// once with its values joined by `,` in the order they came, sorted by name.
    func canonicalHeaders(host: String, headers: [(name: String, value: String)]) -> CanonicalHeaders {
        // A request has a handful of headers: a linear search for repeats beats hashing them.
        var entries: [(name: String, value: String)] = [("host", Self.trimAll(host))]
        entries.reserveCapacity(headers.count + 1)
        for header in headers {
            let name = Self.trimAll(Self.asciiLowercased(header.name))
            // Host comes from `host` only; an empty name cannot be sent, so it is not signed either.
            guard !name.isEmpty, name != "host", !unsignedHeaders.contains(name) else { continue }
            let value = Self.trimAll(header.value)
            if let index = entries.firstIndex(where: { $0.name == name }) {
                entries[index].value += "," + value
            } else {
                entries.append((name, value))
            }
        }
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        var lines = ""
        var signedNames = ""
        for (index, entry) in entries.enumerated() {
            lines += entry.name + ":" + entry.value + "\n"
            if index > 0 { signedNames += ";" }
            signedNames += entry.name
        }
        return CanonicalHeaders(lines: lines, signedNames: signedNames)
    }

    /// `text` with A-Z lower-cased; header names are ASCII, and `lowercased()` walks Unicode tables.
    static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return text }
        return String(decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// `text` without leading or trailing whitespace, each inner run of spaces, tabs, CRs and LFs as one space.
    static func trimAll(_ text: String) -> String {
        if !needsTrimming(text) { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                pendingSpace = !out.isEmpty
            default:
                if pendingSpace { out.append(UInt8(ascii: " ")) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `trimAll` would change `text`: whitespace at either end, a tab or line break, or two spaces in a row.
    private static func needsTrimming(_ text: String) -> Bool {
        var previousSpace = true  // a space first is leading whitespace
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "):
                if previousSpace { return true }
                previousSpace = true
            case UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                return true
            default:
                previousSpace = false
            }
        }
        return previousSpace && !text.isEmpty
    }

    /// Method, path, query, header block, signed-header list and payload hash, one per line.
    func canonicalRequest(
        method: String, path: String, query: String, headers: CanonicalHeaders, payload: PayloadHash
    ) -> String {
        method + "\n" + path + "\n" + query + "\n" + headers.lines + "\n" + headers.signedNames + "\n" + payload.headerValue
    }

    // MARK: - Stage 2: the string to sign

    /// `20130524/us-east-1/s3/aws4_request`.
    func credentialScope(day: String) -> String {
        "\(day)/\(region)/\(service)/aws4_request"
    }

    /// Algorithm, timestamp, credential scope and the hex SHA-256 of the canonical request, one per line.
    func stringToSign(canonicalRequest: String, time: AMZDate) -> String {
        var canonical = canonicalRequest
        // Hashed in place: copying the request into an array first was a third of this stage.
        let hash = canonical.withUTF8 { Digest.sha256Hex(UnsafeRawBufferPointer($0)) }
        return Self.algorithm + "\n" + time.timestamp + "\n" + credentialScope(day: time.day) + "\n" + hash
    }

    // MARK: - Stage 3: the signing key

    /// HMAC chain from `AWS4` + secret over day, region, service and `aws4_request`; cached per scope.
    func signingKey(day: String) -> [UInt8] {
        keyCache.key(for: .init(day: day, region: region, service: service)) {
            var key = Digest.hmacSHA256(key: Array("AWS4\(credentials.secretAccessKey)".utf8), data: Array(day.utf8))
            for part in [region, service, "aws4_request"] {
                key = Digest.hmacSHA256(key: key, data: Array(part.utf8))
            }
            return key
        }
    }

    // MARK: - Stage 4: the signature

    /// The hex HMAC-SHA256 of the string to sign under the day's signing key.
    func signature(stringToSign: String, day: String) -> String {
        hexString(Digest.hmacSHA256(key: signingKey(day: day), data: Array(stringToSign.utf8)))
    }
}
