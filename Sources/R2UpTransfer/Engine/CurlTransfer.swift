internal import CCurl
import CChecksum
import Foundation
import R2UpModel

/// One transfer on an easy handle, and everything curl reads and writes through it while it runs.
/// Confined to the engine thread: curl easy handles are not thread-safe. The engine owns the
/// handle (it reuses handles) and resets it when the transfer is done.
final class CurlTransfer {
    let id: UInt64
    let handle: UnsafeMutableRawPointer
    let request: HTTPRequest
    private let continuation: CheckedContinuation<HTTPResponse, any Error>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// curl keeps this pointer for the handle's life, so the handle owns the memory.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var bodyPosition: Int64 = 0
    /// CRC-32C of the body read so far (`checksumsBody`); valid while read from the start.
    private var bodyCRC: (value: UInt32, valid: Bool) = (0, true)
    private var responseBody: [UInt8] = []
    private var responseBytes: Int64 = 0
    private var responseHeaders: [(name: String, value: String)] = []
    private var status = 0
    /// A failure found inside a callback, which curl only reports as a generic abort.
    private var callbackFailure: TransferError?
    private var lastProgressReport: UInt64 = 0
    /// Download bytes granted by the rate limit but not yet written.
    private var writeCredit = 0
    private(set) var finished = false
    /// Asks the engine for bytes it may send now; nil when unlimited.
    var bandwidthGrant: ((Int) -> Int)?
    /// Called when the read callback has handed curl the body's last byte: the engine then frees
    /// curl's upload buffer once those bytes are on the socket (`releaseUploadBufferIfSent`).
    var bodyHandedOver: (() -> Void)?
    /// Called when the read callback paused the body for its gate (`HTTPRequest.heldBy`).
    var bodyHeld: (() -> Void)?

    init(
        id: UInt64, handle: UnsafeMutableRawPointer, request: HTTPRequest, options: TransferEngine.Options,
        share: UnsafeMutableRawPointer? = nil, continuation: CheckedContinuation<HTTPResponse, any Error>
    ) throws(TransferError) {
        self.id = id
        self.handle = handle
        self.request = request
        self.continuation = continuation
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try configure(options)
        if let share { try set(CURLOPT_SHARE, pointer: share) }
    }

    // The handle may still point at these until the engine resets it; it only reads them while it runs.
    deinit {
        if let list = headerList { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    // MARK: - Setup

    /// Every setopt's result is checked: an option libcurl refused would send another request
    /// than the one signed (or none at all).
    private func check(_ code: CURLcode, _ option: CURLoption) throws(TransferError) {
        guard code == CURLE_OK else {
            throw TransferError(
                kind: .other, curlCode: Int(code.rawValue),
                message: "libcurl refused option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    private func set(_ option: CURLoption, _ value: Int) throws(TransferError) {
        try check(r2_easy_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, string: String) throws(TransferError) {
        // curl copies string options, so a temporary C string is enough.
        try check(string.withCString { r2_easy_setopt_ptr(handle, option, $0) }, option)
    }

    private func set(_ option: CURLoption, pointer: UnsafeRawPointer?) throws(TransferError) {
        try check(r2_easy_setopt_ptr(handle, option, pointer), option)
    }

    private func configure(_ options: TransferEngine.Options) throws(TransferError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let urlResult = request.url.withCString { r2_easy_setopt_ptr(handle, CURLOPT_URL, $0) }
        guard urlResult == CURLE_OK else {
            throw TransferError(kind: .malformedURL, message: "the URL \(request.url) is not valid")
        }
        // The path goes out exactly as signed: without this curl folds "a/../b" and "./x" and the
        // server sees another path than the signature covers.
        try set(CURLOPT_PATH_AS_IS, 1)
        try set(CURLOPT_NOSIGNAL, 1)
        if r2_curl_has_protocols_str() != 0 {
            try set(CURLOPT_PROTOCOLS_STR, string: "http,https")
        }
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        // One CA file and no directory: curl then parses it once per run (`CurlRuntime.builtInCAFile`).
        // A TLS backend without CA directories refuses the option (CURLE_NOT_BUILT_IN): nothing to clear.
        if let file = options.caBundle ?? CurlRuntime.builtInCAFile {
            try set(CURLOPT_CAINFO, string: file)
            _ = r2_easy_setopt_ptr(handle, CURLOPT_CAPATH, nil)
        }
        try set(CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeoutMilliseconds)
        try set(CURLOPT_LOW_SPEED_LIMIT, options.tuning?.lowSpeedLimit ?? options.lowSpeedLimitBytesPerSecond)
        try set(CURLOPT_LOW_SPEED_TIME, options.lowSpeedTimeSeconds)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        if let idle = options.idleConnectionMilliseconds { try set(CURLOPT_MAXAGE_CONN, max(1, idle / 1000)) }
        if request.freshConnection { try set(CURLOPT_FRESH_CONNECT, 1) }
        try set(CURLOPT_USERAGENT, string: options.userAgent)
        try set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)

        // An empty "Expect:" stops curl waiting up to a second for a 100 that R2 never sends.
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Expect:")
        headerList = list
        for (name, value) in request.headers {
            // Last line of defence against header injection: the flags and settings were checked already.
            if let problem = HeaderValue.problem(name) ?? HeaderValue.problem(value) {
                throw TransferError(kind: .other, message: "the header \(name) was not sent: \(problem)")
            }
            guard let longer = curl_slist_append(list, "\(name): \(value)") else {
                throw TransferError(kind: .other, message: "out of memory building the request headers")
            }
            list = longer
            headerList = list
        }
        try set(CURLOPT_HTTPHEADER, pointer: list)

        switch request.method {
        case "GET": try set(CURLOPT_HTTPGET, 1)
        case "HEAD": try set(CURLOPT_NOBODY, 1)
        default:
            if request.body != .none || request.method == "PUT" || request.method == "POST" {
                try set(CURLOPT_UPLOAD, 1)
                try check(r2_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.length)), CURLOPT_INFILESIZE_LARGE)
                try check(r2_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadBody), CURLOPT_READFUNCTION)
                try set(CURLOPT_READDATA, pointer: context)
                try check(r2_easy_setopt_seek_callback(handle, curlSeekBody), CURLOPT_SEEKFUNCTION)
                try set(CURLOPT_SEEKDATA, pointer: context)
                // curl allocates this buffer per handle: a small body needs no more than curl's
                // minimum, and a deep pool gets smaller ones (its memory stays within the budget).
                let cap = min(options.uploadBufferSize, options.tuning?.uploadBufferCap ?? options.uploadBufferSize)
                try set(CURLOPT_UPLOAD_BUFFERSIZE, Int(min(Int64(cap), max(16_384, request.body.length))))
            }
            if request.method != "PUT" {
                try set(CURLOPT_CUSTOMREQUEST, string: request.method)
            }
        }
        try check(r2_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteBody), CURLOPT_WRITEFUNCTION)
        try set(CURLOPT_WRITEDATA, pointer: context)
        try check(r2_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderLine), CURLOPT_HEADERFUNCTION)
        try set(CURLOPT_HEADERDATA, pointer: context)
        if request.onProgress != nil {
            try set(CURLOPT_NOPROGRESS, 0)
            try check(r2_easy_setopt_xferinfo_callback(handle, curlProgress), CURLOPT_XFERINFOFUNCTION)
            try set(CURLOPT_XFERINFODATA, pointer: context)
        }
    }

    // MARK: - Callbacks (engine thread)

    fileprivate func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let remaining = request.body.length - bodyPosition
        if remaining <= 0 { return 0 }
        if let gate = request.heldBy {
            switch gate.state {
            case .held:
                bodyHeld?()
                return r2_readfunc_pause
            case .refused:
                callbackFailure = TransferError(kind: .bodyWithheld, message: "the request's body was withheld")
                return r2_readfunc_abort
            case .released:
                break
            }
        }
        var wanted = Int(min(Int64(capacity), remaining))
        if let grant = bandwidthGrant {
            wanted = grant(wanted)
            if wanted == 0 { return r2_readfunc_pause }
        }
        switch request.body {
        case .none:
            return 0
        case .bytes(let bytes):
            let start = Int(bodyPosition)
            bytes.withUnsafeBufferPointer { source in
                UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + start, byteCount: wanted)
            }
            bodyPosition += Int64(wanted)
            noteHandedOver()
            return wanted
        case .file(let slice):
            var done = 0
            while done < wanted {
                let got = pread(slice.descriptor, buffer + done, wanted - done, off_t(slice.offset + bodyPosition + Int64(done)))
                if got < 0 {
                    if errno == EINTR { continue }
                    callbackFailure = TransferError(
                        kind: .fileReadFailed, osErrno: errno,
                        message: "reading the file failed: \(String(cString: strerror(errno)))")
                    return r2_readfunc_abort
                }
                if got == 0 {
                    callbackFailure = TransferError(
                        kind: .fileShorterThanExpected,
                        message: "the file ended early: it changed while it was being uploaded")
                    return r2_readfunc_abort
                }
                done += got
            }
            // ~8 GB/s (SSE 4.2): 8 µs for a 64 KiB buffer, while the bytes are still in cache.
            if request.checksumsBody { bodyCRC.value = r2up_crc32c(bodyCRC.value, buffer, done) }
            bodyPosition += Int64(done)
            noteHandedOver()
            return done
        }
    }

    /// Once every byte of the body is on the socket, frees curl's upload buffer (16 KiB and up):
    /// a request waiting for its reply holds none of it, and hundreds wait at once for R2's
    /// ~200 ms commit. Setting the size is what frees it in curl 7.62 to 8.6 ("realloc at the next
    /// opportunity"): curl allocates it again if it must send the body again (a retry on a new
    /// connection), and later versions keep no such buffer. False while bytes are still unsent.
    func releaseUploadBufferIfSent() -> Bool {
        var sent: curl_off_t = 0
        guard r2_easy_getinfo_off(handle, CURLINFO_SIZE_UPLOAD_T, &sent) == CURLE_OK else { return true }
        guard Int64(sent) >= request.body.length else { return false }
        _ = r2_easy_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, 16_384)
        return true
    }

    /// The body's last byte went to curl: tell the engine (once per pass over the body).
    private func noteHandedOver() {
        if bodyPosition >= request.body.length { bodyHandedOver?() }
    }

    fileprivate func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= request.body.length else { return Int32(r2_seekfunc_fail) }
        bodyPosition = offset
        bodyCRC = (0, offset == 0)
        return Int32(r2_seekfunc_ok)
    }

    fileprivate func writeBody(_ buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        switch request.sink {
        case .memory(let limit):
            if responseBody.count + count > limit {
                callbackFailure = TransferError(
                    kind: .responseTooLarge, message: "the server's reply was larger than \(limit) bytes")
                return 0
            }
            buffer.withMemoryRebound(to: UInt8.self, capacity: count) {
                responseBody.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        case .file(let descriptor, let offset, let limit):
            // An error reply goes to memory so it can be parsed, not into the user's file.
            if !(200..<300).contains(status) {
                // The first MiB says what went wrong; the rest is dropped, not a failed write
                // (which would read as the local disk's fault and not be retried).
                if responseBody.count + count > 1 << 20 { return count }
                buffer.withMemoryRebound(to: UInt8.self, capacity: count) {
                    responseBody.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
                }
                return count
            }
            // Downloads share the upload rate limit. curl cannot take part of a write, so the
            // grant is saved up across calls and the transfer paused until it covers `count`.
            if let grant = bandwidthGrant {
                if writeCredit < count {
                    let granted = grant(count - writeCredit)
                    writeCredit += granted
                    if writeCredit < count {
                        // A zero grant is what puts the transfer on the engine's list to unpause.
                        if granted != 0 { _ = grant(0) }
                        return r2_writefunc_pause
                    }
                }
                writeCredit -= count
            }
            // Bytes past the range asked for would land in the next range's place in the file.
            if let limit, responseBytes + Int64(count) > limit {
                callbackFailure = TransferError(
                    kind: .responseLongerThanAsked, message: "the server's reply was longer than the \(limit) bytes asked for")
                return 0
            }
            var done = 0
            while done < count {
                let wrote = pwrite(descriptor, buffer + done, count - done, off_t(offset + responseBytes + Int64(done)))
                if wrote < 0 {
                    if errno == EINTR { continue }
                    callbackFailure = TransferError(
                        kind: .fileWriteFailed, osErrno: errno,
                        message: "writing the file failed: \(String(cString: strerror(errno)))")
                    return 0
                }
                done += wrote
            }
        }
        responseBytes += Int64(count)
        return count
    }

    fileprivate func headerLine(_ buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        // On bytes, not Foundation strings: this runs for every header of every reply.
        buffer.withMemoryRebound(to: UInt8.self, capacity: count) { start in
            let bytes = UnsafeBufferPointer(start: start, count: count)
            guard let line = HeaderLine(bytes) else { return }
            switch line {
            case .status(let code):
                // A new status line (after a 100 or on a retry) starts a fresh header set.
                responseHeaders.removeAll(keepingCapacity: true)
                status = code
            case .field(let name, let value):
                responseHeaders.append((name, value))
            }
        }
        return count
    }

    fileprivate func progress(uploaded: Int64) -> Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        if now - lastProgressReport >= 250_000_000 {
            lastProgressReport = now
            request.onProgress?(uploaded)
        }
        return 0
    }

    // MARK: - Completion

    /// Resumes the waiting task once; the engine removes the handle first.
    func finish(code: CURLcode) {
        guard !finished else { return }
        finished = true
        if let failure = callbackFailure {
            continuation.resume(throwing: failure)
            return
        }
        guard code == CURLE_OK else {
            var osErrno = 0
            _ = r2_easy_getinfo_long(handle, CURLINFO_OS_ERRNO, &osErrno)
            let detail = String(cString: errorBuffer)
            continuation.resume(throwing: TransferError.from(code: code, osErrno: Int32(osErrno), detail: detail))
            return
        }
        var code = 0
        _ = r2_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        request.onProgress?(bodyPosition)
        var response = HTTPResponse(
            status: code, headers: responseHeaders, body: responseBody, bodyBytesReceived: responseBytes, receivedAt: Date())
        if request.checksumsBody, case .file = request.body, bodyCRC.valid, bodyPosition == request.body.length {
            response.bodyCRC32C = bodyCRC.value
        }
        continuation.resume(returning: response)
    }

    func finish(throwing error: any Error) {
        guard !finished else { return }
        finished = true
        continuation.resume(throwing: error)
    }
}

// C callbacks: they capture nothing and find their transfer through the context pointer,
// which stays valid because the engine holds the transfer until curl is done with it.
private let curlReadBody: r2_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return r2_readfunc_abort }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().readBody(into: buffer, capacity: size * count)
}

private let curlSeekBody: r2_seek_callback = { context, offset, origin in
    guard let context else { return Int32(r2_seekfunc_fail) }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().seekBody(to: Int64(offset), origin: origin)
}

private let curlWriteBody: r2_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().writeBody(buffer, count: size * count)
}

private let curlHeaderLine: r2_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().headerLine(buffer, count: size * count)
}

private let curlProgress: r2_xferinfo_callback = { context, _, _, _, uploaded in
    guard let context else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().progress(uploaded: Int64(uploaded))
}
