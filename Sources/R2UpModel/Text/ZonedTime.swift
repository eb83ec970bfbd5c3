public import Foundation

/// A time as r2up prints it for people: local time with its zone, e.g. "2026-11-26 22:55 EST",
/// "2026-11-26 22:55 +01:00", "2026-11-26 21:55 UTC". Every human-readable time the CLI, the
/// sync summary and the key-conflict message print comes from here (JSON keeps ISO 8601).
/// The zone is the letter abbreviation when the platform has one (EST, PDT), "UTC" at a zero
/// offset, otherwise the offset: on Linux Foundation names most zones only "GMT+1", which
/// reads as a sign error next to "+01:00".
public enum ZonedTime {
    /// How much of the time is printed.
    public enum Precision: Sendable {
        /// "2026-11-26 22:55 +01:00"
        case minute
        /// "2026-11-26 22:55:07 +01:00"
        case second
        /// "22:55:07 +01:00": a clock redrawn in place, whose day the reader knows.
        case clock
    }

    /// `date` in `timeZone`, to the minute (or as `precision` says), followed by the zone.
    /// - Parameters:
    ///   - date: The time to print.
    ///   - timeZone: The reader's zone: the process's (`TZ`) unless a test or an app gives one.
    ///   - precision: Minutes (the default), seconds, or a clock without the day.
    /// - Returns: e.g. "2026-11-26 22:55 +01:00".
    public static func text(_ date: Date, timeZone: TimeZone = .current, precision: Precision = .minute) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))"
        let minute = "\(two(parts.hour)):\(two(parts.minute))"
        let body: String
        switch precision {
        case .minute: body = "\(day) \(minute)"
        case .second: body = "\(day) \(minute):\(two(parts.second))"
        case .clock: body = "\(minute):\(two(parts.second))"
        }
        return body + " " + zone(timeZone, at: date)
    }

    /// "UTC", "EST" or "+09:00" for `timeZone` at `date` (daylight saving changes it).
    /// - Parameters:
    ///   - timeZone: The zone to name.
    ///   - date: The moment, which picks standard or daylight saving time.
    /// - Returns: The zone's letters where the platform has them, else its offset.
    public static func zone(_ timeZone: TimeZone, at date: Date) -> String {
        let offset = timeZone.secondsFromGMT(for: date)
        if offset == 0 { return "UTC" }
        if let name = timeZone.abbreviation(for: date), !name.isEmpty, name.allSatisfy({ $0.isASCII && $0.isLetter }),
            name != "GMT", name != "UTC"
        {
            return name
        }
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return "\(sign)\(two(minutes / 60)):\(two(minutes % 60))"
    }

    private static func two(_ value: Int?) -> String {
        let value = value ?? 0
        return value < 10 ? "0\(value)" : "\(value)"
    }
}
