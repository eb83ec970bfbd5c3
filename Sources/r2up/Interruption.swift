import Foundation
import Synchronization
import R2UpKit

/// Ctrl-C and SIGTERM during a run: the run's task is cancelled, so no new transfer starts and
/// the ones in flight are left resumable; the command then says so and exits 130. A second
/// signal ends the process at once (what was recorded stays; leases of a dead process expire).
enum Interruption {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    /// The first signal that cancelled a run, for its exit code (128 + the signal, as shells expect).
    private static let first = Mutex<Int32?>(nil)

    /// 143 when SIGTERM stopped the run, else 130 (Ctrl-C).
    static var exitCode: Int32 { 128 + (first.withLock { $0 } ?? SIGINT) }

    /// Runs `body` in a task that SIGINT and SIGTERM cancel.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await run(onSignal: { seen, task in
            if seen > 1 { exit(exitCode) }
            task.cancel()
        }, body)
    }

    /// Runs `body` in a task; each SIGINT or SIGTERM calls `onSignal` with how many have come
    /// so far and the task (a watch stops gently first); the signals get their default action
    /// back once `body` returns.
    static func run<T: Sendable>(
        onSignal: @escaping @Sendable (_ seen: Int, _ task: Task<T, Never>) -> Void, _ body: @escaping @Sendable () async -> T
    ) async -> T {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let task = Task { await body() }
        let count = Count()
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                first.withLock { if $0 == nil { $0 = number } }
                let seen = count.value.withLock { value in
                    value += 1
                    return value
                }
                onSignal(seen, task)
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
    /// The line a run that did not finish ends with (none when it finished).
    var stopLines: [String] {
        RunEnding.line(
            stoppedBy: stoppedBy?.diagnosis.message, interrupted: interrupted, leftResumable: leftResumable,
            // Not `retry`: it takes failed and killed uploads, not files a stopped run never started.
            resume: "run the same command again"
        ).map { ["r2up: \($0)"] } ?? []
    }
}
