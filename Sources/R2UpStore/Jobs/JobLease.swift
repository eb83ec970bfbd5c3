public import Foundation

/// A process as a lease names it: its pid and when it started, so a pid the kernel has
/// since given to another program does not pass for the run that died.
public struct ProcessIdentity: Sendable, Hashable, Codable {
    public var pid: Int32
    /// The start time in clock ticks since boot (`/proc/PID/stat`, field 22); 0 where unknown.
    public var startTime: Int64

    public init(pid: Int32, startTime: Int64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// This process.
    public static let current = ProcessIdentity(pid: getpid(), startTime: startTime(of: getpid()) ?? 0)

    /// Whether this process is still running. With a start time the pid must still belong to
    /// the same process; without one (no /proc) the pid existing is all that can be known.
    public var isAlive: Bool {
        if pid <= 0 { return false }
        if startTime != 0, let now = Self.startTime(of: pid) { return now == startTime }
        if kill(pid, 0) == 0 { return startTime == 0 || !Self.hasProc }
        return errno == EPERM && (startTime == 0 || !Self.hasProc)
    }

    private static let hasProc = access("/proc/self/stat", R_OK) == 0

    /// Field 22 of `/proc/PID/stat`, read after the command name's closing parenthesis
    /// (the name itself may hold spaces and parentheses); nil for a process that is gone,
    /// or has exited and waits to be reaped (a zombie holds its pid but uploads nothing).
    static func startTime(of pid: Int32) -> Int64? {
        #if os(Linux)
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return parseStartTime(buffer[0..<count])
        #else
        // No /proc: a lease names the pid alone, and `isAlive` asks the kernel for it.
        return nil
        #endif
    }

    static func parseStartTime(_ stat: ArraySlice<UInt8>) -> Int64? {
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After ") " come fields 3, 4, …: the state first, the start time the 20th of them.
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard fields.count >= 20 else { return nil }
        if let state = fields[0].first, [UInt8(ascii: "Z"), UInt8(ascii: "X"), UInt8(ascii: "x")].contains(state) { return nil }
        return Int64(String(decoding: fields[19], as: UTF8.self))
    }
}

/// Who works on a job: stored on its row (owner pid, start time, heartbeat).
///
/// A job is uploading only while its lease is live; a job whose owner is gone is
/// interrupted and the next run takes it over (DESIGN §5).
public struct JobLease: Sendable, Equatable, Codable {
    public var owner: ProcessIdentity
    public var heartbeatAt: Date

    /// How often a run renews its leases.
    public static let heartbeatInterval: Duration = .seconds(2)
    /// Without a start time to check, a lease whose heartbeat is older than this is dead.
    public static let staleAfter: TimeInterval = 10

    public init(owner: ProcessIdentity, heartbeatAt: Date) {
        self.owner = owner
        self.heartbeatAt = heartbeatAt
    }

    /// Whether a live process holds it.
    public func isLive(now: Date = Date()) -> Bool {
        isLive(now: now, ownerAlive: owner.isAlive)
    }

    /// `isLive` with the owner's `isAlive` already known (a report of thousands of jobs asks
    /// /proc once per owner, not once per job).
    public func isLive(now: Date, ownerAlive: Bool) -> Bool {
        guard ownerAlive else { return false }
        // A pid checked against its start time needs no heartbeat; a bare pid might be reused.
        if owner.startTime != 0 { return true }
        return now.timeIntervalSince(heartbeatAt) < Self.staleAfter
    }

    /// Whether this process holds it.
    public var isMine: Bool { owner == .current }
}
