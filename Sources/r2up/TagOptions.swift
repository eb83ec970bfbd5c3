public import ArgumentParser
import R2UpKit

/// The audio flags of push and sync (DESIGN §12).
struct TagOptions: ParsableArguments {
    @Option(
        name: .customLong("key-template"),
        help: ArgumentHelp(
            "Make each key from the file's tags, e.g. '{albumartist}/{album} ({year})/{disc}-{track:02} {title}.{ext}'.",
            valueName: "TEMPLATE"))
    var keyTemplate: String?

    @Flag(name: .customLong("no-tag-metadata"), help: "Do not send the tags as x-amz-meta-* headers (they are still read and stored).")
    var noTagMetadata = false

    /// `--key-template` parsed; a bad one is one line and exit 2, before anything is read or sent.
    func template() throws -> KeyTemplate? {
        guard let keyTemplate else { return nil }
        do { return try KeyTemplate(keyTemplate) } catch {
            throw CommandFailure(Diagnosis(category: .badInput, message: error.description))
        }
    }
}

extension StatusGrouping: ExpressibleByArgument {}
