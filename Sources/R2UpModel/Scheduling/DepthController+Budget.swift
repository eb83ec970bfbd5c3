/// What the depth may spend: memory for its requests' buffers, and the fewest it keeps.
extension DepthController {
    /// The upload buffer each request may take at this depth: its share of `bufferBudget` less
    /// `requestOverhead`, from curl's minimum (16 KiB) to `bufferCap`. A pinned depth of hundreds
    /// then stays within the budget too (512 requests of 3 MiB parts no longer hold 512 KiB each).
    public var uploadBufferCap: Int {
        let share = Self.bufferBudget / Int64(max(1, depth)) - Self.requestOverhead
        return Int(max(16 << 10, min(Self.bufferCap, share)))
    }

    /// The fewest requests kept in flight outside throttling: 4 for small requests, 2 for big
    /// ones (one transfers while the other waits for its reply).
    package static func floor(meanBytes: Double) -> Int {
        guard meanBytes > 0 else { return 2 }
        // Clamped as a Double: HEADs and DELETEs (0 bytes) drive the mean towards 0.
        return Int(min(4.0, max(2.0, (8.0 * 1_048_576) / meanBytes)))
    }

    /// The most requests whose memory fits the budget: their upload buffers and `requestOverhead`
    /// each, or (`measured`: the rest is bounded by `noteResident`) their upload buffers alone.
    package static func memoryCap(meanBytes: Double, measured: Bool = false) -> Int {
        let buffer = max(16_384, min(Double(bufferCap), meanBytes))
        let overhead = measured ? 0 : Double(requestOverhead)
        return max(1, min(maximumDepth, Int(Double(bufferBudget) / (overhead + buffer))))
    }
}
