import ArgumentParser
import Uploader

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

    /// `--key-template`, checked by `validate()`.
    var template: KeyTemplate? { keyTemplate.flatMap { try? KeyTemplate($0) } }

    func validate() throws {
        if let keyTemplate {
            do { _ = try KeyTemplate(keyTemplate) } catch { throw ValidationError(error.description) }
        }
    }
}

extension StatusGrouping: ExpressibleByArgument {}
