internal import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's descriptors: a pipe that wakes its loop from other threads, and (on Linux) the
/// epoll set of curl's sockets. Made with the engine and closed when it is gone, after its loop
/// ended, so a late wake never writes into a descriptor the process reused for something else.
struct EngineDescriptors: Sendable {
    let wakeRead: Int32
    let wakeWrite: Int32
    /// -1 where there is no epoll: the loop then polls the sockets curl named.
    let epoll: Int32

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        epoll = r2_epoll_create()
    }

    /// Wakes the loop (any thread). A full pipe already holds a wake-up.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    func closeAll() {
        for fd in [wakeRead, wakeWrite, epoll] where fd >= 0 { _ = close(fd) }
    }
}

/// What curl asked the engine to watch (`curl_multi_socket_action`): its sockets and its timer.
///
/// Each wake-up then hands curl only the sockets that are ready. `curl_multi_poll` rebuilt a poll
/// set of every transfer's sockets and `curl_multi_perform` visited every transfer on each of the
/// thousands of wake-ups of a deep small-file push (~31 poll calls per file at 128 in flight).
/// Engine thread only; curl calls it back from inside its multi calls.
final class SocketWatch {
    struct Ready {
        let socket: curl_socket_t
        /// `CURL_CSELECT_IN`, `_OUT`, `_ERR` as `curl_multi_socket_action` takes them.
        let events: Int32
    }

    private let descriptors: EngineDescriptors
    /// When curl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`, in uptime nanoseconds.
    private(set) var timerDeadline: UInt64?
    /// The sockets and what curl waits for on each (`CURL_POLL_IN`, `_OUT`, `_INOUT`).
    private var interest: [curl_socket_t: Int32] = [:]
    private var readyFDs = [Int32](repeating: 0, count: 256)
    private var readyMasks = [Int32](repeating: 0, count: 256)
    private var drain = [UInt8](repeating: 0, count: 64)

    init(descriptors: EngineDescriptors) {
        self.descriptors = descriptors
        if descriptors.epoll >= 0 { _ = r2_epoll_watch(descriptors.epoll, descriptors.wakeRead, CURL_POLL_IN, 0) }
    }

    /// Registers the callbacks; `detach` must run before the multi handle outlives this object.
    func attach(_ multi: UnsafeMutableRawPointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = r2_multi_setopt_socket_callback(multi, curlSocketChanged)
        _ = r2_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, context)
        _ = r2_multi_setopt_timer_callback(multi, curlTimerChanged)
        _ = r2_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, context)
    }

    /// curl_multi_cleanup closes cached connections later: it must not call back into a freed object.
    func detach(_ multi: UnsafeMutableRawPointer) {
        _ = r2_multi_setopt_socket_callback(multi, nil)
        _ = r2_multi_setopt_timer_callback(multi, nil)
    }

    /// The multi handle was closed (its sockets with it): nothing it asked for is watched any more.
    func forgetAll() {
        if descriptors.epoll >= 0 {
            for socket in interest.keys { _ = r2_epoll_watch(descriptors.epoll, socket, CURL_POLL_REMOVE, 1) }
        }
        interest.removeAll()
        timerDeadline = nil
    }

    fileprivate func setTimer(milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
    }

    /// Whether curl's timer has expired (then it is cleared: curl sets it again as it needs).
    func takeDueTimer(now: UInt64) -> Bool {
        guard let deadline = timerDeadline, deadline <= now else { return false }
        timerDeadline = nil
        return true
    }

    /// Milliseconds until curl's timer, at most `cap`.
    func timerWait(now: UInt64, cap: Int32) -> Int32 {
        guard let deadline = timerDeadline else { return cap }
        guard deadline > now else { return 0 }
        return Int32(min(UInt64(cap), (deadline - now + 999_999) / 1_000_000))
    }

    fileprivate func watch(_ socket: curl_socket_t, what: Int32) {
        let known = interest[socket] != nil
        if what == CURL_POLL_REMOVE {
            interest[socket] = nil
        } else {
            interest[socket] = what
        }
        // curl tells before it closes a socket, so a failed removal means it is gone already.
        if descriptors.epoll >= 0 { _ = r2_epoll_watch(descriptors.epoll, socket, what, known ? 1 : 0) }
    }

    /// Waits up to `milliseconds` for a ready socket or a wake-up; returns the ready sockets.
    func wait(milliseconds: Int32) -> [Ready] {
        if descriptors.epoll >= 0 { return waitEpoll(milliseconds) }
        return waitPoll(milliseconds)
    }

    private func waitEpoll(_ milliseconds: Int32) -> [Ready] {
        let count = readyFDs.withUnsafeMutableBufferPointer { fds in
            readyMasks.withUnsafeMutableBufferPointer { masks in
                r2_epoll_wait(descriptors.epoll, fds.baseAddress, masks.baseAddress, milliseconds)
            }
        }
        guard count > 0 else { return [] }
        var ready: [Ready] = []
        ready.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            if readyFDs[index] == descriptors.wakeRead {
                drainWakes()
            } else {
                ready.append(Ready(socket: readyFDs[index], events: readyMasks[index]))
            }
        }
        return ready
    }

    /// Where there is no epoll: poll(2) on the sockets curl named and the wake pipe.
    private func waitPoll(_ milliseconds: Int32) -> [Ready] {
        var set = [pollfd(fd: descriptors.wakeRead, events: Int16(POLLIN), revents: 0)]
        set.reserveCapacity(interest.count + 1)
        for (socket, what) in interest {
            var events: Int16 = 0
            if what & CURL_POLL_IN != 0 { events |= Int16(POLLIN) }
            if what & CURL_POLL_OUT != 0 { events |= Int16(POLLOUT) }
            set.append(pollfd(fd: socket, events: events, revents: 0))
        }
        let count = set.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
        guard count > 0 else { return [] }
        if set[0].revents != 0 { drainWakes() }
        var ready: [Ready] = []
        for entry in set.dropFirst() where entry.revents != 0 {
            var mask: Int32 = 0
            if entry.revents & Int16(POLLIN | POLLHUP) != 0 { mask |= CURL_CSELECT_IN }
            if entry.revents & Int16(POLLOUT) != 0 { mask |= CURL_CSELECT_OUT }
            if entry.revents & Int16(POLLERR | POLLNVAL) != 0 { mask |= CURL_CSELECT_ERR }
            ready.append(Ready(socket: entry.fd, events: mask))
        }
        return ready
    }

    private func drainWakes() {
        let fd = descriptors.wakeRead
        while drain.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}

// C callbacks: they capture nothing and find the watch through the context pointer, which the
// engine loop keeps alive until it detaches them.
private let curlSocketChanged: curl_socket_callback = { _, socket, what, context, _ in
    guard let context else { return -1 }
    Unmanaged<SocketWatch>.fromOpaque(context).takeUnretainedValue().watch(socket, what: what)
    return 0
}

private let curlTimerChanged: curl_multi_timer_callback = { _, milliseconds, context in
    guard let context else { return -1 }
    Unmanaged<SocketWatch>.fromOpaque(context).takeUnretainedValue().setTimer(milliseconds: milliseconds)
    return 0
}
