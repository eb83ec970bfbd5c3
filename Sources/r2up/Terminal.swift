import Foundation
import R2UpKit
import Synchronization

/// Writing to the terminal: results on stdout, everything else on stderr.
///
/// Everything goes through `write(_:to:)` (write(2), not FileHandle, whose `write` traps on
/// EPIPE). A reader that closed stdout early (`r2up history | head -1`) ends the run quietly
/// with exit 141, as a shell tool killed by SIGPIPE would: nothing more is printed, uploads
/// not yet started stay queued for the next run (`admitsMoreWork`), the ones in flight finish
/// and are recorded, and `R2Up.main` exits 141.
enum Terminal {
    /// 128 + SIGPIPE, what a shell shows for a writer whose reader went away.
    static let closedOutputStatus: Int32 = 141

    private static let outputClosed = Atomic<Bool>(false)

    /// True once a write to stdout failed with EPIPE.
    static var isOutputClosed: Bool { outputClosed.load(ordering: .relaxed) }

    /// For a queue run's `admit`: start no new upload once nobody reads what it would print.
    static var admitsMoreWork: Bool { !isOutputClosed }

    /// For a command that may print nothing for hours (watch): whether stdout is a pipe whose
    /// reader went away, without writing to it (Linux sets POLLERR on such a pipe's write end).
    /// Remembered like a failed write.
    static func checkOutputReader() -> Bool {
        var info = stat()
        guard !isOutputClosed, fstat(STDOUT_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return !isOutputClosed }
        var descriptor = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        if poll(&descriptor, 1, 0) > 0, descriptor.revents & Int16(POLLERR) != 0 {
            outputClosed.store(true, ordering: .relaxed)
        }
        return !isOutputClosed
    }

    static func output(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    /// Nothing once stdout's reader went away: the run ends quietly (no summary after `| head -1`).
    static func error(_ line: String) {
        if isOutputClosed { return }
        write(line + "\n", to: STDERR_FILENO)
    }

    /// Writes all of `text`; a closed stdout is remembered (see above), a closed stderr drops the text.
    static func write(_ text: String, to descriptor: Int32) {
        if descriptor == STDOUT_FILENO && isOutputClosed { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            #if canImport(Glibc)
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            #else
            let written = bytes.withUnsafeBytes { Darwin.write(descriptor, $0.baseAddress, $0.count) }
            #endif
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EPIPE && descriptor == STDOUT_FILENO {
                outputClosed.store(true, ordering: .relaxed)
                return
            }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }
}

/// JSON for listings: sorted keys, ISO 8601 dates, no escaped slashes (URLs stay readable).
enum JSONOutput {
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Summaries carry the exit code the run ends with (`exitCode` in `sync --json`).
        encoder.userInfo[ExitCodes.key] = ExitCodes.cli
        guard let data = try? encoder.encode(value) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The command line as bytes: Swift hands arguments over as Strings, repairing bytes that are
/// not UTF-8 into U+FFFD, and that repaired spelling names no file.
enum RawArguments {
    /// Each argument that is not valid UTF-8, keyed by the String Swift made of it.
    static func notUTF8() -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index], String(validatingCString: pointer) == nil else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
            found[String(decoding: bytes, as: UTF8.self)] = bytes
        }
        return found
    }
}
