import ArgumentParser
import R2UpKit

/// `--concurrency` as typed, checked by the command's `validate()`: a word gets the same line as
/// a number out of range (argument-parser's own "The value 'abc' is invalid…" names no range).
struct ConcurrencyValue: ExpressibleByArgument {
    let text: String

    init?(argument: String) { text = argument }

    /// The depth asked for; nil when the text is not one (`check` says why).
    var depth: Int? { Int(text).flatMap { (1...RunOptions.maximumConcurrency).contains($0) ? $0 : nil } }

    /// Throws the one line for a value that is not a depth.
    func check() throws {
        guard depth == nil else { return }
        let shown = Int(text) == nil ? "'\(text)'" : text
        throw ValidationError("--concurrency must be from 1 to \(RunOptions.maximumConcurrency), got \(shown)")
    }
}
