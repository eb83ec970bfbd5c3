public import Foundation
import R2UpModel
public import SigV4
import Synchronization

/// Signs and sends S3 API requests through a shared transfer engine.
///
/// Stateless apart from a clock offset that is learnt when a server reports
/// `RequestTimeTooSkewed`, so one client serves any number of concurrent tasks.
public final class S3Client: Sendable {
    public let endpoint: S3Endpoint
    public let region: String
    public let engine: TransferEngine
    let signer: Signer
    private let sessionToken: Bool
    /// Seconds to add to the local clock so signatures match the server's time.
    private let clockOffset = Mutex<TimeInterval>(0)
    /// Whether any request of this process got a reply: until one does, a refused connection is
    /// about the endpoint (a stopped server, a wrong port), not about the file being sent.
    private let answered = Atomic<Bool>(false)
    /// The `Server` header of the first reply that had one: which implementation answers.
    private let serverHeader = Mutex<String?>(nil)

    public init(endpoint: S3Endpoint, region: String, credentials: Credentials, engine: TransferEngine) {
        self.endpoint = endpoint
        self.region = region
        self.engine = engine
        signer = Signer(credentials: credentials, region: region, service: "s3")
        sessionToken = credentials.sessionToken != nil
    }

    /// The corrected current time used for signing.
    public var now: Date { Date().addingTimeInterval(clockOffset.withLock { $0 }) }

    /// Whether the server has answered any request of this client (with any status).
    public var hasAnswered: Bool { answered.load(ordering: .relaxed) }

    /// The `Server` header the endpoint answered with, once any reply came (`ServerProfile.identify`).
    public var server: String? { serverHeader.withLock { $0 } }

    // MARK: - Request plumbing

    struct Call {
        var method: String
        var bucket: String?
        var key: String?
        var query: [(name: String, value: String)] = []
        var headers: [(name: String, value: String)] = []
        var body: RequestBody = .none
        var payload: PayloadHash = .empty
        var sink: ResponseSink = .memory(limit: 8 << 20)
        var onProgress: (@Sendable (Int64) -> Void)?
        var freshConnection = false
        var checksumsBody = false
        var heldBy: BodyGate?
    }

    func signedRequest(for call: Call, date: Date) -> (request: SigningRequest, url: String, headers: [(name: String, value: String)]) {
        let request = SigningRequest(
            method: call.method, host: endpoint.authority(bucket: call.bucket),
            path: endpoint.path(bucket: call.bucket, key: call.key), query: call.query, headers: call.headers)
        let signed = signer.sign(request, payload: call.payload, date: date)
        var url = "\(endpoint.scheme)://\(request.host)\(request.encodedPath)"
        let query = request.encodedQuery
        if !query.isEmpty { url += "?" + query }
        return (request, url, call.headers + signed)
    }

    /// Sends a call; a non-2xx reply becomes `.service`. A skewed clock is corrected and the call retried once.
    /// Signing and reading the reply are out of line: this frame stays allocated while the request is in flight.
    func send(_ call: Call) async throws(S3ClientError) -> HTTPResponse {
        var corrected = false
        while true {
            let request = httpRequest(for: call)
            let response: HTTPResponse
            do {
                response = try await engine.perform(request)
            } catch let error as TransferError {
                throw .transfer(error)
            } catch {
                throw .transfer(TransferError(kind: .cancelled, message: "cancelled"))
            }
            if try answer(response, to: call, corrected: &corrected) { return response }
        }
    }

    @inline(never)
    private func httpRequest(for call: Call) -> HTTPRequest {
        let (_, url, headers) = signedRequest(for: call, date: now)
        var request = HTTPRequest(
            method: call.method, url: url, headers: headers, body: call.body, sink: call.sink, onProgress: call.onProgress)
        request.freshConnection = call.freshConnection
        request.checksumsBody = call.checksumsBody
        request.heldBy = call.heldBy
        return request
    }

    /// Whether the reply is the call's answer (a 2xx); false when the clock was corrected and the
    /// call goes again. Anything else is a `.service` failure.
    @inline(never)
    private func answer(_ response: HTTPResponse, to call: Call, corrected: inout Bool) throws(S3ClientError) -> Bool {
        answered.store(true, ordering: .relaxed)
        if let server = response.header("server") { serverHeader.withLock { if $0 == nil { $0 = server } } }
        // A 2xx is judged by what each call needs from it (an ETag, an XML root), never by its
        // Content-Type: moto answers a good PUT with an empty text/html body.
        if (200..<300).contains(response.status) { return true }
        let failure = S3ServiceError(response: response)
        // A HEAD reply has no body to say RequestTimeTooSkewed: a bare 403 whose Date is far
        // from our clock is taken as skew too, or a first HEAD on a wrong clock fails for good.
        let skewedHead = call.method == "HEAD" && response.status == 403 && response.body.isEmpty
            && failure.serverDate.flatMap(HTTPDate.parse).map { abs($0.timeIntervalSince(now)) > 300 } == true
        if failure.code == "RequestTimeTooSkewed" || skewedHead, !corrected, let serverDate = failure.serverDate,
            let server = HTTPDate.parse(serverDate)
        {
            clockOffset.withLock { $0 = server.timeIntervalSince(response.receivedAt) }
            corrected = true
            return false
        }
        throw .service(failure)
    }

    /// Learns the clock offset from a server `Date` header (tests set a skew with it).
    func adjustClock(serverDate: Date) {
        clockOffset.withLock { $0 = serverDate.timeIntervalSince(Date()) }
    }

    static func etag(_ response: HTTPResponse) -> String {
        Self.unquote(response.header("etag") ?? "")
    }

    /// The ETag every S3 upload reply (PutObject, UploadPart) carries; a 2xx without one is not
    /// S3's answer (a web server, a filer), and taking it as success would skip the ETag check.
    static func requiredETag(_ response: HTTPResponse) throws(S3ClientError) -> String {
        let etag = Self.etag(response)
        guard etag.isEmpty else { return etag }
        let html = response.header("content-type")?.lowercased().contains("text/html") == true && !response.body.isEmpty
        let what = html ? "an HTML page" : "no ETag"
        throw .unexpectedResponse("it answered \(what) (HTTP \(response.status)) to an upload, which S3 answers with an ETag; check \(OptionName.endpoint.option)")
    }

    static func unquote(_ text: String) -> String {
        // Bytes, not Foundation's CharacterSet trimming: this runs on every reply.
        var bytes = text.utf8[...]
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes.removeFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        if bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") {
            bytes = bytes.dropFirst().dropLast()
        }
        return String(Substring(bytes))
    }

    static func document(_ response: HTTPResponse, root: String) throws(S3ClientError) -> XMLNode {
        guard let node = XMLNode.parse(response.body) else {
            throw .unexpectedResponse("the reply is not XML (HTTP \(response.status))")
        }
        if node.name == "Error" {
            // S3 may answer 200 and still fail (CompleteMultipartUpload does this).
            var failure = S3ServiceError(response: response)
            failure.status = response.status
            throw .service(failure)
        }
        guard node.name == root else {
            throw .unexpectedResponse("expected <\(root)>, got <\(node.name)>")
        }
        return node
    }
}

/// Parses the IMF-fixdate form of the HTTP `Date` header: `Sun, 22 Nov 2026 21:00:00 GMT`.
package enum HTTPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", let day = Int(fields[1]),
            let month = months.firstIndex(of: String(fields[2])), let year = Int(fields[3])
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        return CivilTime.date(year: year, month: month + 1, day: day, hour: clock[0], minute: clock[1], second: clock[2])
    }
}

/// UTC calendar arithmetic without Foundation's Calendar (cheap and thread-safe).
enum CivilTime {
    static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        // Years past 9999 are no real date, and far enough out (~3e11) overflow the arithmetic below.
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }
}
