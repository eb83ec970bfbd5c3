import Foundation

// A file's times as nanoseconds since 1970. Linux's `struct stat` names them st_mtim and
// st_ctim; Darwin's st_mtimespec and st_ctimespec: the one place that knows.
extension stat {
    /// Modification time, nanoseconds since 1970.
    package var mtimeNs: Int64 {
        #if os(Linux)
        Self.nanoseconds(st_mtim)
        #else
        Self.nanoseconds(st_mtimespec)
        #endif
    }

    /// Status change time (ctime), nanoseconds since 1970.
    package var ctimeNs: Int64 {
        #if os(Linux)
        Self.nanoseconds(st_ctim)
        #else
        Self.nanoseconds(st_ctimespec)
        #endif
    }

    /// Modification time, whole seconds since 1970 (rounded down, as `tv_sec` is).
    package var mtimeSeconds: Int {
        #if os(Linux)
        st_mtim.tv_sec
        #else
        st_mtimespec.tv_sec
        #endif
    }

    private static func nanoseconds(_ time: timespec) -> Int64 { time.clampedNanoseconds }
}

extension timespec {
    /// The time in nanoseconds since 1970, clamped: ext4 stores mtimes up to the year 2446,
    /// past Int64 nanoseconds (2262), and `touch -d` sets them; such a file must not trap r2up.
    package var clampedNanoseconds: Int64 {
        let (seconds, overflow) = Int64(tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return tv_sec < 0 ? Int64.min : Int64.max }
        let (total, carry) = seconds.addingReportingOverflow(Int64(tv_nsec))
        return carry ? Int64.max : total
    }
}
