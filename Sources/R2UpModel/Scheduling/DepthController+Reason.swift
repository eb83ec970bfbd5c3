extension DepthController {
    /// Why the depth is what it is (shown by `-v` and in `--json` summaries).
    public enum Reason: String, Sendable, Equatable {
        /// Shown as "pinned by" the concurrency option (`DepthReport`).
        case pinned
        case starting = "sized to the first request"
        case rising = "throughput rose with depth"
        case draining = "draining to measure the unqueued latency"
        case full = "link or server full: deeper would only queue"
        case slower = "replies slowed down"
        case needed = "fewer in flight lost throughput"
        case throttled = "the server throttled (429/503 SlowDown)"
        case recovering = "recovering after throttling"
        case maximum = "the most r2up keeps in flight (512, or fewer where open files are limited)"
        case memory = "the most that fit the memory budget"
    }
}
