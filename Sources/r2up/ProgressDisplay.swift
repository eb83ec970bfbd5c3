import Foundation
import Synchronization
import R2UpKit

/// Progress bars on stderr, redrawn in place ten times a second while a run lasts. Each
/// frame is one write that moves up over the last frame and overwrites it line by line
/// (no clear first, so nothing flickers). Lines printed during the run go above the bars.
final class ProgressDisplay: Sendable {
    private struct State {
        var linesDrawn = 0
        var rate: RateWindow
        var running = true
    }

    private let progress: TransferProgress
    private let style: TerminalStyle
    private let state: Mutex<State>
    private let stopped = DispatchSemaphore(value: 0)

    /// A display, when stderr is a terminal that can move its cursor and nobody asked for quiet.
    static func make(for progress: TransferProgress, quiet: Bool) -> ProgressDisplay? {
        let environment = ProcessInfo.processInfo.environment
        guard !quiet, Terminal.stderrIsTerminal, environment["TERM"] != "dumb" else { return nil }
        return ProgressDisplay(progress: progress, style: TerminalStyle(environment: environment, isTerminal: true))
    }

    private init(progress: TransferProgress, style: TerminalStyle) {
        self.progress = progress
        self.style = style
        state = Mutex(State(rate: RateWindow(limit: progress.limit)))
    }

    func start() {
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) {
                state.withLock { draw(&$0) }
                Thread.sleep(forTimeInterval: 0.1)
            }
            stopped.signal()
        }
    }

    /// Writes a line to stdout (or stderr) above the bars.
    func print(_ line: String, toStandardError: Bool = false) {
        state.withLock { state in
            erase(&state)
            Self.write(line + "\n", to: toStandardError ? STDERR_FILENO : STDOUT_FILENO)
            draw(&state)
        }
    }

    /// Stops redrawing and removes the bars, leaving the terminal as before the run.
    func finish() {
        let wasRunning = state.withLock { state in
            defer { state.running = false }
            return state.running
        }
        guard wasRunning else { return }
        stopped.wait()
        state.withLock { erase(&$0) }
    }

    private func draw(_ state: inout State) {
        guard state.running else { return }
        let snapshot = progress.snapshot()
        guard snapshot.filesTotal > 0 else { return }
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let rate = state.rate.rate(bytesMoved: snapshot.bytesMoved, at: now)
        // One column short of the edge: writing the last column makes some terminals wrap.
        let lines = ProgressBars(width: Self.columns() - 1, style: style).lines(snapshot, rate: rate)
        var frame = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A\r" : "\r"
        for line in lines { frame += line + "\u{1B}[K\n" }
        frame += "\u{1B}[J"
        Self.write(frame, to: STDERR_FILENO)
        state.linesDrawn = lines.count
    }

    private func erase(_ state: inout State) {
        guard state.linesDrawn > 0 else { return }
        Self.write("\u{1B}[\(state.linesDrawn)A\r\u{1B}[J", to: STDERR_FILENO)
        state.linesDrawn = 0
    }

    private static func columns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        Terminal.write(text, to: descriptor)
    }
}
