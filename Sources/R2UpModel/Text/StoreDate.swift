public import Foundation

/// Dates as the store keeps them: GRDB's "yyyy-MM-dd HH:mm:ss.SSS" in UTC, which sorts as text.
/// Written by hand because Foundation's DateFormatter (ICU) was 5% of a small-file push's CPU.
package enum StoreDate {
    package static func text(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient)
        var fraction = Int(milliseconds % 1000)
        if fraction < 0 {
            fraction += 1000
            seconds -= 1
        }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Bytes into a fixed buffer: this runs several times per file of a push.
        var text: [UInt8] = []
        text.reserveCapacity(23)
        func put(_ value: Int, digits: Int, then separator: UInt8?) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor <= value / 10 { divisor *= 10 }  // a fifth year digit is kept, as GRDB would
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (value / divisor) % 10))
                divisor /= 10
            }
            if let separator { text.append(separator) }
        }
        put(Int(parts.tm_year) + 1900, digits: 4, then: UInt8(ascii: "-"))
        put(Int(parts.tm_mon) + 1, digits: 2, then: UInt8(ascii: "-"))
        put(Int(parts.tm_mday), digits: 2, then: UInt8(ascii: " "))
        put(Int(parts.tm_hour), digits: 2, then: UInt8(ascii: ":"))
        put(Int(parts.tm_min), digits: 2, then: UInt8(ascii: ":"))
        put(Int(parts.tm_sec), digits: 2, then: UInt8(ascii: "."))
        put(fraction, digits: 3, then: nil)
        return String(decoding: text, as: UTF8.self)
    }
}
