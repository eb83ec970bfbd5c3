import Foundation

/// Sizes and rates as people type them: `500K`, `8M`, `8MiB`, `1.5G`, `1048576` (binary multiples, like rclone).
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        var digits = text.trimmingCharacters(in: .whitespaces).uppercased()
        for suffix in ["IB", "B", "/S"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits.removeLast(suffix.count)
        }
        var multiplier: Double = 1
        if let last = digits.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][String(last)] {
            multiplier = pow1024(power)
            digits.removeLast()
        }
        guard !digits.isEmpty, let number = Double(digits), number >= 0, number.isFinite else { return nil }
        let bytes = number * multiplier
        guard bytes < 9.0e18 else { return nil }
        return Int64(bytes)
    }

    private static func pow1024(_ power: Int) -> Double {
        var value: Double = 1
        for _ in 0..<power { value *= 1024 }
        return value
    }
}
