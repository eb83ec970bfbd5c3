import Foundation

/// A signing time as SigV4 writes it: `20130524T000000Z`, and its day `20130524`.
///
/// Computed with integer arithmetic from the Unix time (no DateFormatter, no locale, no shared state), so it
/// is cheap and safe from any thread. Times outside 1970...9999 are clamped, because the format has a
/// four-digit year and a NaN or infinite date must not trap.
struct AMZDate: Sendable, Equatable {
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    let timestamp: String
    /// `YYYYMMDD`, the first field of the credential scope.
    let day: String

    /// The last second of 9999-12-31.
    static let latestSecond: Int64 = 253_402_300_799

    init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        let seconds: Int64
        if interval.isNaN || interval <= 0 {
            seconds = 0
        } else if interval >= Double(Self.latestSecond) {
            seconds = Self.latestSecond
        } else {
            seconds = Int64(interval.rounded(.down))
        }
        let (year, month, dayOfMonth) = Self.civilDate(daysSinceEpoch: seconds / 86_400)
        let secondOfDay = seconds % 86_400

        var text: [UInt8] = []
        text.reserveCapacity(16)
        func put(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        put(year, digits: 4)
        put(month, digits: 2)
        put(dayOfMonth, digits: 2)
        day = String(decoding: text, as: UTF8.self)
        text.append(UInt8(ascii: "T"))
        put(secondOfDay / 3600, digits: 2)
        put(secondOfDay / 60 % 60, digits: 2)
        put(secondOfDay % 60, digits: 2)
        text.append(UInt8(ascii: "Z"))
        timestamp = String(decoding: text, as: UTF8.self)
    }

    /// Proleptic Gregorian year, month and day for a day count from 1970-01-01 (days ≥ 0), following
    /// Howard Hinnant's `civil_from_days`: count in 400-year eras of 146097 days, with years starting in March
    /// so the leap day falls at the end.
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
