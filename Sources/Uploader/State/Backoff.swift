import Foundation

/// Exponential backoff with full jitter, as a pure function of its inputs.
///
/// The wait before retry number `attempt` (1 after the first failure) is
/// `random × min(cap, base × 2^(attempt−1))`, the "full jitter" that keeps many
/// clients from retrying in step.
public enum Backoff {
    /// The longest wait allowed before retry number `attempt`.
    public static func ceiling(attempt: Int, base: Duration, cap: Duration) -> Duration {
        // In Double seconds so a large attempt count cannot overflow; it just meets the cap.
        let grown = base.timeInterval * pow(2, Double(max(attempt, 1) - 1))
        return .seconds(min(grown, cap.timeInterval))
    }

    /// The wait before retry number `attempt`.
    /// - Parameters:
    ///   - attempt: 1 after the first failure, 2 after the second, …
    ///   - base: the ceiling of the first wait.
    ///   - cap: no wait is longer.
    ///   - random: a number in [0, 1] from the caller's random source (clamped).
    public static func delay(attempt: Int, base: Duration, cap: Duration, random: Double) -> Duration {
        let unit = random.isNaN ? 0 : min(max(random, 0), 1)
        return .seconds(ceiling(attempt: attempt, base: base, cap: cap).timeInterval * unit)
    }
}

extension Duration {
    /// The duration in seconds, for date arithmetic.
    var timeInterval: TimeInterval {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
