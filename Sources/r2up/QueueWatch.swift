import Foundation
import Synchronization
import R2UpKit

/// `r2up queue --watch`: reads the queue every interval (through the same read-only store
/// `r2up queue` opens, so it never takes the write lock) and shows seed 003's HUD.
///
/// On a terminal it draws on the alternate screen, as top and watch(1) do: each frame starts
/// at the top-left corner, so a resize or a frame taller than the last cannot leave stale
/// lines or scroll, and on exit the screen the user had comes back untouched. Off a terminal
/// it prints one plain report per interval (a log of the queue, e.g. under systemd or
/// `| tee`), with --json one JSON object per line. SIGINT, SIGTERM and SIGHUP end it with
/// exit 0; a reader that closed stdout with 141, like every command.
struct QueueWatch {
    var global: GlobalOptions
    var interval: Double
    var json: Bool

    private enum Mode { case screen, plain, jsonLines }

    private final class Signals: Sendable {
        let stop = Atomic<Bool>(false)
        let resized = Atomic<Bool>(false)
    }

    private static let enterScreen = "\u{1B}[?1049h\u{1B}[?25l"
    private static let leaveScreen = "\u{1B}[?25h\u{1B}[?1049l"

    func run() async throws {
        let path: String
        let opened: QueueWatchSource?
        do {
            path = try global.settings().database.value
            opened = try QueueWatchSource(path: path)
        } catch {
            throw CommandFailure(error)
        }
        guard var source = opened else {
            throw CommandFailure(
                Diagnosis(
                    category: .storeFailure,
                    message: "no database at \(path): nothing was ever queued there; push, sync or watch creates it (or give --db)"))
        }
        let environment = ProcessInfo.processInfo.environment
        let mode: Mode = json ? .jsonLines : (Terminal.stdoutIsTerminal && environment["TERM"] != "dumb" ? .screen : .plain)
        let style = TerminalStyle(environment: environment, isTerminal: mode == .screen)

        let signals = Signals()
        let sources = Self.listen(signals)
        defer {
            for source in sources { source.cancel() }
        }
        if mode == .screen { Terminal.write(Self.enterScreen, to: STDOUT_FILENO) }
        defer {
            if mode == .screen { Terminal.write(Self.leaveScreen, to: STDOUT_FILENO) }
        }

        var rates = QueueRates()
        var shown = QueueReport.empty
        var note: String?
        var refreshed = Date()
        var nextRead = Date.distantPast
        while !signals.stop.load(ordering: .relaxed) && !Terminal.isOutputClosed {
            let resized = signals.resized.exchange(false, ordering: .relaxed)
            if Date() >= nextRead {
                refreshed = Date()
                nextRead = refreshed.addingTimeInterval(interval)
                note = nil
                do {
                    // A database replaced on disk (restored, moved in) is opened again; one gone ends the watch.
                    switch try source.read(now: refreshed) {
                    case .report(var report):
                        rates.update(&report, at: refreshed)
                        shown = report
                    case .busy:
                        note = "the database is busy; showing the last report"
                    }
                } catch let gone as QueueWatchSource.Gone {
                    throw CommandFailure(
                        Diagnosis(category: .storeFailure, message: "the database at \(gone.path) is gone (deleted or moved); nothing to watch"))
                } catch {
                    throw CommandFailure(error)
                }
                draw(shown, at: refreshed, note: note, mode: mode, style: style)
            } else if resized && mode == .screen {
                draw(shown, at: refreshed, note: note, mode: mode, style: style)
            }
            try? await Task.sleep(for: .milliseconds(min(100, Int(interval * 1000))))
        }
    }

    private func draw(_ report: QueueReport, at time: Date, note: String?, mode: Mode, style: TerminalStyle) {
        switch mode {
        case .screen:
            let size = Self.size()
            // One column short of the edge (writing the last one makes some terminals wrap), and
            // no newline after the last line, so a frame as tall as the screen never scrolls it.
            let lines = QueueHUD(width: size.columns - 1, height: size.rows, style: style).lines(report, at: time, note: note)
            let frame = "\u{1B}[H" + lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J"
            Terminal.write(frame, to: STDOUT_FILENO)
        case .plain:
            let lines = QueueHUD(width: nil, height: nil, style: style).lines(report, at: time, note: note)
            Terminal.write(lines.joined(separator: "\n") + "\n\n", to: STDOUT_FILENO)
        case .jsonLines:
            Terminal.write(Self.jsonLine(WatchLine(time: time, note: note, report: report)) + "\n", to: STDOUT_FILENO)
        }
    }

    /// `queue --json`'s object on one line, with the time it was read (and a note when the
    /// database was busy and the report is the last one read).
    private struct WatchLine: Encodable {
        var time: Date
        var note: String?
        var report: QueueReport

        private enum Key: String, CodingKey { case time, note }

        func encode(to encoder: any Encoder) throws {
            try report.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(time, forKey: .time)
            try container.encodeIfPresent(note, forKey: .note)
        }
    }

    private static func jsonLine(_ line: WatchLine) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(line) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// SIGINT, SIGTERM and SIGHUP stop the loop (which then restores the screen); SIGWINCH redraws.
    private static func listen(_ signals: Signals) -> [any DispatchSourceSignal] {
        let stopping = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { signals.stop.store(true, ordering: .relaxed) }
            source.resume()
            return source
        }
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
        resize.setEventHandler { signals.resized.store(true, ordering: .relaxed) }
        resize.resume()
        return stopping + [resize]
    }

    /// The file's inode, nil when it is not there.
    private static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
