package import Foundation

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

    /// The date a stored text names, for the shapes r2up and SQLite's strftime write:
    /// "yyyy-MM-dd HH:mm:ss", a "T" for the space, a fraction (its first three digits count,
    /// as GRDB's), a trailing "Z"; nil for anything else (GRDB's parser reads it).
    /// Counted by hand: GRDB's path goes through Foundation's Calendar, which loads ICU's
    /// zone and locale data (3 MiB of `status`'s memory) and was a tenth of its time.
    package static func date(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { date(bytes: $0) }
    }

    static func date(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for byte in bytes[start..<start + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        // Before 1900 Foundation's calendar may count Julian days: left to it.
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), year >= 1900, (1...12).contains(month),
            day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var nanosecond = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 100_000_000
            let first = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if scale >= 1_000_000 { nanosecond += Int(bytes[index] - UInt8(ascii: "0")) * scale }
                scale /= 10
                index += 1
            }
            guard index > first else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "Z") { index += 1 }
        guard index == bytes.count else { return nil }
        // Days since 2001-01-01 (the reference date), then the time of day, summed as Foundation does.
        let days = daysSince1970(year: year, month: month, day: day) - 11_323
        let inDay = Double(hour * 3600 + minute * 60 + second) + Double(nanosecond) / 1_000_000_000
        return Date(timeIntervalSinceReferenceDate: Double(days * 86_400) + inDay)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the Gregorian calendar (a year counted from March,
    /// so the leap day comes last).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
