import Foundation
import Synchronization
import Uploader

/// Ctrl-C and SIGTERM during a run: the run's task is cancelled, so no new transfer starts and
/// the ones in flight are left resumable; the command then says so and exits 130. A second
/// signal ends the process at once (what was recorded stays; leases of a dead process expire).
enum Interruption {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    /// Runs `body` in a task that SIGINT and SIGTERM cancel.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let task = Task { await body() }
        let count = Count()
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let seen = count.value.withLock { value in
                    value += 1
                    return value
                }
                if seen > 1 { exit(ExitStatus.interrupted.rawValue) }
                task.cancel()
            }
            source.resume()
            return source
        }
        let value = await task.value
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        return value
    }
}

extension QueueRunSummary {
    /// The lines a run ends with when it did not finish: why it stopped, or that it was
    /// interrupted, and what is left to resume.
    var stopLines: [String] {
        var lines: [String] = []
        let left = leftResumable == 1 ? "1 upload is" : "\(leftResumable) uploads are"
        if let stoppedBy {
            // One line: the jobs stay queued and the next run takes them, as `r2up queue` shows.
            lines.append("r2up: \(stoppedBy.diagnosis.message)")
        } else if interrupted {
            lines.append("r2up: interrupted; \(left) left to resume: run the same command again (or r2up retry)")
        }
        return lines
    }
}
