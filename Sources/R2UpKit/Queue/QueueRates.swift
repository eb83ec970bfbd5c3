package import Foundation

/// Bytes a second of the uploads in flight, from successive queue reports. The store holds
/// only the bytes sent, which a running r2up writes at most once a second, so one report to
/// the next jumps by a second's worth or by none: the rate is the growth over the last
/// `window` seconds of reports, which smooths those steps.
package struct QueueRates: Sendable {
    struct Sample: Sendable, Equatable {
        var time: Date
        var bytes: Int64
    }

    package var window: TimeInterval
    private var samples: [UUID: [Sample]] = [:]

    package init(window: TimeInterval = 5) {
        self.window = window
    }

    /// Notes the bytes sent of each upload in `report` at `time` and sets its `bytesPerSecond`
    /// (left nil until two reports some time apart have seen it). Uploads no longer in flight
    /// are forgotten.
    package mutating func update(_ report: inout QueueReport, at time: Date) {
        var kept: [UUID: [Sample]] = [:]
        for index in report.uploading.indices {
            let entry = report.uploading[index]
            var list = samples[entry.id] ?? []
            // Fewer bytes: the upload started over (a new multipart upload); its old samples say nothing.
            if let last = list.last, entry.bytesSent < last.bytes || time < last.time { list = [] }
            list.append(Sample(time: time, bytes: entry.bytesSent))
            list.removeAll { time.timeIntervalSince($0.time) > window }
            kept[entry.id] = list
            if let first = list.first, let last = list.last, last.time > first.time {
                report.uploading[index].bytesPerSecond =
                    Double(last.bytes - first.bytes) / last.time.timeIntervalSince(first.time)
            }
        }
        samples = kept
    }
}
