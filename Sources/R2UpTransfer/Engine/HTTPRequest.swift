public import Foundation

/// A byte range of an open file, read with `pread` as curl asks for it.
public struct FileSlice: Sendable, Equatable {
    /// An open file descriptor; the caller keeps it open until the transfer ends.
    public var descriptor: Int32
    public var offset: Int64
    public var length: Int64

    public init(descriptor: Int32, offset: Int64, length: Int64) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
    }
}

/// What a request sends.
public enum RequestBody: Sendable, Equatable {
    case none
    case bytes([UInt8])
    case file(FileSlice)

    var length: Int64 {
        switch self {
        case .none: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let slice): return slice.length
        }
    }
}

/// Where a response body goes.
public enum ResponseSink: Sendable, Equatable {
    /// Kept in memory; a body over `limit` bytes fails the transfer (an S3 reply is small).
    case memory(limit: Int)
    /// Written with `pwrite` into an open file starting at `offset`; at most `limit` bytes: a
    /// longer body (a range's reply with broken framing) fails the transfer, never written past.
    case file(descriptor: Int32, offset: Int64, limit: Int64? = nil)
}

/// One HTTP exchange for the engine. The URL is already encoded exactly as it was signed.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: RequestBody
    public var sink: ResponseSink
    /// Called on the engine thread with the bytes sent so far, at most a few times a second.
    public var onProgress: (@Sendable (Int64) -> Void)?
    /// On a new connection: libcurl silently sends a request again when a reused connection
    /// dies before the reply, which must not happen unseen to a request that creates something.
    public var freshConnection = false
    /// The CRC-32C of a file body as curl reads it, for a server that answers with the one it
    /// computed (a part checksummed while sent, read once: `ServerProfile.echoesPartCRC32C`).
    public var checksumsBody = false
    /// Holds the body (not the connection or the headers) until the gate decides (`BodyGate`).
    public var heldBy: BodyGate?

    public init(
        method: String, url: String, headers: [(name: String, value: String)] = [],
        body: RequestBody = .none, sink: ResponseSink = .memory(limit: 4 << 20),
        onProgress: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.sink = sink
        self.onProgress = onProgress
    }
}

/// A finished HTTP exchange (any status: the caller decides what a 4xx means).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased, in the order received.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Bytes of the response body received (also when written to a file).
    public var bodyBytesReceived: Int64
    /// When the engine thread saw the reply end: the moment a server `Date` is compared with,
    /// not the later one at which a busy task pool gets round to reading the reply.
    public var receivedAt = Date()
    /// With `checksumsBody` and a file body: the CRC-32C of the bytes sent, read once front to
    /// back (nil when curl seeked into the body, which does not happen on a plain send).
    public var bodyCRC32C: UInt32?

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }
}
