import Foundation

/// `--min-age` and friends: "10s", "500ms", "2m", "1h", "1d", or plain seconds.
public enum SyncDuration {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number = trimmed
        var scale = 1.0
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            number = String(trimmed.dropLast(suffix.count))
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite else { return nil }
        // Beyond ~292 million years the milliseconds would overflow Int64: clamped, for the caller's
        // range check (which also refuses a negative duration, with the range in its message).
        let milliseconds = (value * scale * 1000).rounded()
        guard milliseconds < 9.0e18 else { return .seconds(Int64.max) }
        guard milliseconds > -9.0e18 else { return .seconds(Int64.min) }
        return .milliseconds(Int64(milliseconds))
    }
}
