/// File sizes for people, as DESIGN §3 and seed 002 show them.
///
/// The seed's examples (2,500,000 → "2.4 MB", 1,073,741,824 → "1 GB") are binary
/// multiples, so a KB here is 1,024 bytes, although the seed names ByteCountFormatter's
/// `.file` style (decimal on Apple platforms). At most one decimal; a trailing ".0" is
/// dropped. Two choices the seed leaves open: zero is "0 bytes" (not "Zero KB"), and
/// numbers have no thousands separator ("1023 bytes"), so cron logs read the same in
/// every locale.
public enum ByteCount {
    private static let units = ["KB", "MB", "GB", "TB", "PB", "EB"]

    /// The size as people read it: "500 bytes", "1 KB", "2.4 MB", "1 GB".
    public static func string(_ bytes: Int64) -> String {
        let sign = bytes < 0 ? "-" : ""
        let magnitude = bytes.magnitude
        if magnitude < 1024 {
            return sign + (magnitude == 1 ? "1 byte" : "\(magnitude) bytes")
        }
        var value = Double(magnitude) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        var tenths = (value * 10).rounded()
        // 1,048,575 bytes rounds to "1024 KB"; say "1 MB" instead.
        if tenths >= 10240 && unit < units.count - 1 {
            value /= 1024
            unit += 1
            tenths = (value * 10).rounded()
        }
        let whole = Int64(tenths) / 10
        let decimal = Int64(tenths) % 10
        let number = decimal == 0 ? "\(whole)" : "\(whole).\(decimal)"
        return "\(sign)\(number) \(units[unit])"
    }
}
