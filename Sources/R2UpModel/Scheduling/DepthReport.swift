import Foundation

/// The depth a run used, for `--json` summaries and `-v`.
public struct DepthReport: Sendable, Equatable, Codable {
    public var mode: String
    public var settled: Int
    public var peak: Int
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
        final = controller.depth
        let why = controller.settledReason
        reason = why == .pinned ? "pinned by \(OptionName.concurrency.option)" : why.rawValue
        throttledReplies = controller.throttledReplies
        failedReplies = controller.failedReplies
        cuts = controller.cuts
    }

    /// One line for `-v`.
    public var line: String {
        if mode == "pinned" { return "requests in flight: \(settled) (pinned by \(OptionName.concurrency.option))" }
        var text = "requests in flight: settled at \(settled) (\(reason)), peak \(peak)"
        if throttledReplies > 0 || failedReplies > 0 {
            text += ", \(throttledReplies) throttled replies, \(failedReplies) timeouts or resets, \(cuts) cuts"
        }
        return text
    }
}
