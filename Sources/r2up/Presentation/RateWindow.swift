/// The rate the progress bars show: bytes that went over the wire in this run (the caller
/// passes `TransferProgress`'s `bytesMoved`: no resumed parts, no copies), averaged over the
/// last `span` seconds so a burst does not make it jump, shown once `settle` seconds are
/// measured, and never above `--bwlimit` (a token bucket may grant a burst above it).
public struct RateWindow: Sendable {
    /// The `--bwlimit` in force, in bytes a second.
    public let limit: Int64?
    /// Seconds of samples the rate is averaged over.
    public let span: Double
    /// Seconds measured before a rate is shown.
    public let settle: Double
    private var samples: [(seconds: Double, bytes: Int64)] = []

    public init(limit: Int64?, span: Double = 5, settle: Double = 1) {
        self.limit = limit
        self.span = span
        self.settle = settle
    }

    /// Records `bytesMoved` at `seconds` (any monotonic clock) and returns the rate to show,
    /// in bytes a second; nil until `settle` seconds of samples exist.
    public mutating func rate(bytesMoved: Int64, at seconds: Double) -> Double? {
        samples.append((seconds, bytesMoved))
        samples.removeAll { seconds - $0.seconds > span }
        guard let first = samples.first, seconds - first.seconds >= settle else { return nil }
        let rate = max(0, Double(bytesMoved - first.bytes) / (seconds - first.seconds))
        guard let limit else { return rate }
        return min(rate, Double(limit))
    }
}
