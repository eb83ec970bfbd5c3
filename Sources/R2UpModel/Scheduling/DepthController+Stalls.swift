/// When a request counts as stalled.
extension DepthController {
    /// The slowest a request may go (bytes a second, over curl's low-speed time) before it counts
    /// as stalled: a 64th of its share of the measured link (the link's byte rate over the requests
    /// in flight), so a request crawling far below its fellows is cut while a link that slows down
    /// for all (a tenth of its rate) trips nothing. 1 (only a full stall) until a rate is measured,
    /// for 0-byte requests, and at most 64 KiB/s.
    public var lowSpeedLimit: Int {
        guard !pinned, lastRate > 0, meanBytes > 0, depth > 0 else { return 1 }
        let share = lastRate * meanBytes / Double(depth)
        return Int(max(1, min(Double(Self.lowSpeedCeiling), share / 64)))
    }

    /// The highest `lowSpeedLimit`: 64 KiB a second.
    public static let lowSpeedCeiling = 64 << 10
}
