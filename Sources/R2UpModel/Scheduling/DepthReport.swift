import Foundation

/// The depth a run used, for `--json` summaries and `-v`.
public struct DepthReport: Sendable, Equatable, Codable {
    public var mode: String
    public var settled: Int
    public var peak: Int
    /// The most requests that were in flight at once: below the depth when the run had fewer to send.
    public var busiest: Int
    public var final: Int
    public var reason: String
    public var throttledReplies: Int
    /// Timeouts and broken connections.
    public var failedReplies: Int
    public var cuts: Int

    package init(_ controller: DepthController) {
        mode = controller.pinned ? "pinned" : "adaptive"
        settled = controller.settledDepth
        peak = controller.peakDepth
        busiest = controller.busiest
        final = controller.depth
        let why = controller.settledReason
        if controller.pinned {
            let pin = "pinned by \(OptionName.concurrency.option)"
            reason = why == .memory ? "\(pin) at \(controller.ceiling); \(why.rawValue)" : pin
        } else {
            reason = why.rawValue
        }
        throttledReplies = controller.throttledReplies
        failedReplies = controller.failedReplies
        cuts = controller.cuts
    }

    /// One line for `-v`.
    public var line: String {
        let why = reason
        var text: String
        if busiest == 0 {
            text = "requests in flight: none (no upload or download was needed)"
        } else if mode == "pinned" && busiest > settled {
            // A pin the memory held lower at the end than earlier: the most that went at once.
            text = "requests in flight: at most \(busiest) (\(why))"
        } else if busiest < settled {
            // Fewer requests than the depth (a run of a few files): how many went at once, not
            // only what was allowed.
            text = "requests in flight: at most \(busiest) (the depth allowed \(settled): \(why))"
        } else if mode == "pinned" {
            text = "requests in flight: \(settled) (\(why))"
        } else {
            text = "requests in flight: settled at \(settled) (\(why)), peak \(peak)"
        }
        if throttledReplies > 0 || failedReplies > 0 {
            text += ", \(throttledReplies) throttled replies, \(failedReplies) timeouts or resets, \(cuts) cuts"
        }
        return text
    }
}
