internal import CCurl
import Foundation

/// The curl loop and the state that lives on the engine thread only.
///
/// It drives curl through `curl_multi_socket_action`: curl names the sockets and the timer it
/// waits on (`SocketWatch`), and each wake-up hands it only the sockets that are ready, so a
/// wake-up costs the same at 4 transfers in flight as at 200.
final class EngineLoop: @unchecked Sendable {
    /// Replaced by a fresh one when idle connections are closed (`closeIdleConnections`).
    private(set) var multi: UnsafeMutableRawPointer
    let share: UnsafeMutableRawPointer?
    let options: TransferEngine.Options
    let watch: SocketWatch
    var active: [UInt64: CurlTransfer] = [:]
    var byHandle: [UnsafeMutableRawPointer: UInt64] = [:]
    var unmatchedCancellations: Set<UInt64> = []
    var bucket: TokenBucket?
    var paused: [UInt64] = []
    /// Transfers paused at their body until its gate decides (`BodyGate`).
    var held: [UInt64] = []
    /// Transfers whose body curl has been handed whole: their upload buffer goes once it is sent.
    var handedOver: [UInt64] = []
    /// Reset easy handles ready for the next transfer.
    var idleHandles: [UnsafeMutableRawPointer] = []
    /// When the last transfer ended, while curl's cache may hold connections (uptime ns); nil
    /// while transfers run and once the cache was emptied.
    var idleSince: UInt64?

    init(
        multi: UnsafeMutableRawPointer, share: UnsafeMutableRawPointer?, options: TransferEngine.Options,
        descriptors: EngineDescriptors
    ) {
        self.multi = multi
        self.share = share
        self.options = options
        watch = SocketWatch(descriptors: descriptors)
        if let limit = options.bandwidthLimit, limit > 0 {
            bucket = TokenBucket(rate: limit, now: DispatchTime.now().uptimeNanoseconds)
        }
    }

    func run(engine: TransferEngine) {
        watch.attach(multi)
        while true {
            engine.runJobs()
            let (submissions, cancellations, stopping) = engine.takeInbox()
            for submission in submissions { start(submission) }
            cancel(cancellations)
            resumeDecided()
            runDueTimer()
            collectFinished()
            if stopping && active.isEmpty && engine.finishIfIdle() {
                watch.detach(multi)
                // Connections close while the share they took TLS sessions from is still there.
                curl_multi_cleanup(multi)
                releaseIdleHandles()
                if let share { curl_share_cleanup(share) }
                break
            }
            var timeout = idleWait(now: DispatchTime.now().uptimeNanoseconds)
            if let bucket, !paused.isEmpty {
                // Wake when a chunk's worth has come in, not on every tick.
                let wait = bucket.wait(now: DispatchTime.now().uptimeNanoseconds)
                if wait == 0 { resumePaused() }
                timeout = max(1, wait)
            }
            // After any resume: curl sets its timer to run an unpaused transfer at once.
            timeout = watch.timerWait(now: DispatchTime.now().uptimeNanoseconds, cap: timeout)
            // Something queued meanwhile: look at the sockets without waiting, then take it.
            let ready = watch.wait(milliseconds: engine.mayPoll() ? timeout : 0)
            var running: Int32 = 0
            for socket in ready {
                _ = curl_multi_socket_action(multi, socket.socket, socket.events, &running)
                // After each: a wave of hundreds of connections ready at once would otherwise
                // hold every upload buffer at the same moment.
                releaseSentUploadBuffers()
            }
            runDueTimer()
            collectFinished()
            releaseSentUploadBuffers()
        }
    }

    /// Frees the upload buffer of each transfer whose body is all on the socket: the request then
    /// waits for its reply without it (`CurlTransfer.releaseUploadBufferIfSent`).
    private func releaseSentUploadBuffers() {
        guard !handedOver.isEmpty else { return }
        handedOver.removeAll { id in
            guard let transfer = active[id] else { return true }
            return transfer.releaseUploadBufferIfSent()
        }
    }

    /// Runs curl's timeouts (new transfers start there) once its timer is due.
    private func runDueTimer() {
        guard watch.takeDueTimer(now: DispatchTime.now().uptimeNanoseconds) else { return }
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, r2_socket_timeout, 0, &running)
    }

    private func cancel(_ cancellations: Set<UInt64>) {
        for id in cancellations.union(unmatchedCancellations) {
            if let transfer = active[id] {
                remove(transfer)
                transfer.finish(throwing: CancellationError())
                recycle(transfer.handle)
                unmatchedCancellations.remove(id)
            } else {
                unmatchedCancellations.insert(id)
            }
        }
        if active.isEmpty { unmatchedCancellations.removeAll() }
    }

    /// A multi handle with the engine's connection limit.
    static func makeMulti(_ options: TransferEngine.Options) throws(TransferError) -> UnsafeMutableRawPointer {
        guard let pointer = curl_multi_init() else {
            throw TransferError(kind: .other, message: "libcurl could not be initialised")
        }
        guard r2_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, options.maxConnections) == CURLM_OK else {
            curl_multi_cleanup(pointer)
            throw TransferError(kind: .other, message: "libcurl refused the connection limit \(options.maxConnections)")
        }
        return pointer
    }

    /// How long the loop may wait (ms, at most a second): until idle connections are due to
    /// close, which happens first when their time has come.
    private func idleWait(now: UInt64) -> Int32 {
        guard let since = idleSince, let limit = options.idleConnectionMilliseconds, active.isEmpty else { return 1000 }
        let due = since &+ UInt64(max(0, limit)) * 1_000_000
        guard now >= due else { return Int32(min(1000, (due - now + 999_999) / 1_000_000)) }
        closeIdleConnections()
        return 1000
    }

    /// Closes every connection in curl's cache: only `curl_multi_cleanup` does that without a
    /// new request, so the multi handle is replaced (easy handles are not attached between
    /// transfers; TLS sessions and DNS answers live in the share and stay). The handles kept for
    /// reuse go too: up to 64 of them after a deep burst.
    private func closeIdleConnections() {
        idleSince = nil
        releaseIdleHandles()
        guard let fresh = try? Self.makeMulti(options) else { return }
        watch.detach(multi)
        watch.forgetAll()
        curl_multi_cleanup(multi)
        multi = fresh
        watch.attach(multi)
    }

    /// A transfer left the multi handle: with none left, the idle time starts.
    private func noteIdle() {
        if active.isEmpty { idleSince = DispatchTime.now().uptimeNanoseconds }
    }

    private func start(_ submission: TransferEngine.Submission) {
        // A finished transfer's handle is reused: curl_easy_init and curl_easy_cleanup for
        // every small file cost more than the request's own setup.
        guard let handle = handle(receiveBuffer: Self.receiveBuffer(for: submission.request)) else {
            submission.continuation.resume(
                throwing: TransferError(kind: .other, message: "libcurl could not create a transfer handle"))
            return
        }
        do {
            let transfer = try CurlTransfer(
                id: submission.id, handle: handle, request: submission.request, options: options, share: share,
                continuation: submission.continuation)
            if submission.request.body.length > 0 {
                transfer.bodyHandedOver = { [unowned self, id = submission.id] in self.handedOver.append(id) }
            }
            if submission.request.heldBy != nil {
                transfer.bodyHeld = { [unowned self, id = submission.id] in self.held.append(id) }
            }
            if bucket != nil {
                transfer.bandwidthGrant = { [unowned self, id = submission.id] wanted in
                    let granted = self.bucket!.take(wanted, now: DispatchTime.now().uptimeNanoseconds)
                    if granted == 0 { self.paused.append(id) }
                    return granted
                }
            }
            let added = curl_multi_add_handle(multi, transfer.handle)
            guard added == CURLM_OK else {
                // Never started: the caller gets an error, not a request that waits forever.
                throw TransferError(
                    kind: .other, message: "libcurl could not start the request: \(String(cString: curl_multi_strerror(added)))")
            }
            active[submission.id] = transfer
            byHandle[transfer.handle] = submission.id
            idleSince = nil
        } catch {
            recycle(handle)
            submission.continuation.resume(throwing: error)
        }
    }

    /// The receive buffer a request gets: curl's 16 KiB where a body comes back (GET), its
    /// minimum of 1 KiB where the reply is headers and a short XML document (PUT, HEAD, POST,
    /// DELETE; longer ones take a few reads). curl allocates it for each transfer, so at hundreds
    /// of small requests in flight every KiB counts (measured 2026-11-27, benchmarks "Wide area").
    static func receiveBuffer(for request: HTTPRequest) -> Int {
        request.method == "GET" ? 16_384 : 1_024
    }

    /// A handle with its receive buffer set to `size`: a reset one kept for reuse, else a new one.
    /// curl 7.88 refuses a new size while a handle still holds the buffer of an earlier transfer
    /// (seen after a failed one: "libcurl refused option 98"); that handle is closed, not used with
    /// a buffer of another size than curl believes, and a new one takes its place.
    private func handle(receiveBuffer size: Int) -> UnsafeMutableRawPointer? {
        if let reused = idleHandles.popLast() {
            if r2_easy_setopt_long(reused, CURLOPT_BUFFERSIZE, size) == CURLE_OK { return reused }
            curl_easy_cleanup(reused)
        }
        guard let fresh = curl_easy_init() else { return nil }
        guard r2_easy_setopt_long(fresh, CURLOPT_BUFFERSIZE, size) == CURLE_OK else {
            curl_easy_cleanup(fresh)
            return nil
        }
        return fresh
    }

    private func remove(_ transfer: CurlTransfer) {
        _ = curl_multi_remove_handle(multi, transfer.handle)
        active[transfer.id] = nil
        byHandle[transfer.handle] = nil
        noteIdle()
    }

    /// Resets a handle whose transfer is over (its results read) and keeps it for the next one.
    /// At most `idleHandleLimit` wait (each holds curl's state of a transfer), so a burst of
    /// hundreds in flight does not stay in memory after it.
    private func recycle(_ handle: UnsafeMutableRawPointer) {
        // Frees its upload buffer (curl_easy_reset keeps it): the next transfer sizes its own.
        _ = r2_easy_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, 16_384)
        curl_easy_reset(handle)
        if idleHandles.count < max(4, min(TransferEngine.idleHandleLimit, options.maxConnections)) {
            idleHandles.append(handle)
        } else {
            curl_easy_cleanup(handle)
        }
    }

    func releaseIdleHandles() {
        for handle in idleHandles { curl_easy_cleanup(handle) }
        idleHandles.removeAll()
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let id = byHandle[handle], let transfer = active[id]
            else { continue }
            let code = message.pointee.data.result
            remove(transfer)
            transfer.finish(code: code)
            recycle(transfer.handle)
        }
    }

    /// Resumes the held transfers whose gate has decided: curl calls the read callback again,
    /// which sends the body or ends the transfer. The gate's decision woke the loop.
    private func resumeDecided() {
        guard !held.isEmpty else { return }
        held.removeAll { id in
            guard let transfer = active[id] else { return true }
            guard transfer.request.heldBy?.state != .held else { return false }
            _ = curl_easy_pause(transfer.handle, CURLPAUSE_CONT)
            return true
        }
    }

    private func resumePaused() {
        let ids = paused
        paused.removeAll()
        for id in ids {
            if let transfer = active[id] {
                _ = curl_easy_pause(transfer.handle, CURLPAUSE_CONT)
            }
        }
    }
}
