import Foundation

/// What r2up does about glibc's allocator (every command, from `main`), which keeps what
/// it freed: each thread that allocates gets an arena of its own (up to eight a core), and an
/// arena hands pages back only from its top. The 20-minute soak of 2026-11-27 (a steady tree of
/// 2,000 files) grew 0.6 MiB a minute while `malloc_stats` said 5 MiB of 24 MiB in the arenas was
/// in use; serve's idle RSS after 200 page loads was 71-79 MiB with glibc's moving thresholds,
/// 70.5-70.8 MiB with fixed ones. Nothing happens on a libc without these calls. Public: `serve`
/// and other apps on R2UpKit's face call them too.
public enum ProcessMemory {
    /// Two arenas at most, and fixed thresholds (glibc raises them after a large block is freed,
    /// and then keeps such blocks in the arenas). A setting given in the environment wins. Call it
    /// before the threads start allocating: arenas made before it stay.
    public static func limitArenas() {
        guard let mallopt else { return }
        let environment = ProcessInfo.processInfo.environment
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(-8, 2) }  // M_ARENA_MAX
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil { _ = mallopt(-3, 128 * 1024) }  // M_MMAP_THRESHOLD
        if environment["MALLOC_TRIM_THRESHOLD_"] == nil { _ = mallopt(-1, 128 * 1024) }  // M_TRIM_THRESHOLD
    }

    /// The process's resident memory in bytes (`/proc/self/statm`: resident pages), what a
    /// peak-RSS bound counts; nil where there is no such file.
    @Sendable package static func residentBytes() -> Int64? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "size resident shared text lib data dt", in pages.
        let fields = buffer[..<count].split(separator: 0x20)
        guard fields.count >= 2, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        let pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))
        guard pageSize > 0 else { return nil }
        return pages * pageSize
    }

    /// Hands the free pages of every arena back to the system (`malloc_trim(0)`; a few
    /// milliseconds).
    public static func releaseFreed() { _ = trim?(0) }

    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()

    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
}
