import ArgumentParser
import Foundation
import R2UpKit

/// Each command's words for the flags `LibraryViewOptions` declares.
protocol LibraryViewHelp {
    static var json: String { get }
    static var remote: String { get }
    static var prefix: String { get }
    static var by: String { get }
    static var folder: String { get }
}

/// The flags `status` and `du` share: a folder (or every track r2up knows), grouped by folder,
/// album or artist, compared with the bucket with --remote (under --prefix), as JSON with --json.
struct LibraryViewOptions<Help: LibraryViewHelp>: ParsableArguments {
    @Flag(help: ArgumentHelp(Help.json))
    var json = false

    @Flag(help: ArgumentHelp(Help.remote))
    var remote = false

    @Option(help: ArgumentHelp(Help.prefix))
    var prefix: String?

    @Option(help: ArgumentHelp(Help.by))
    var by: StatusGrouping?

    @Argument(help: ArgumentHelp(Help.folder))
    var folder: String?

    init() {}

    /// --prefix only says where --remote lists.
    func validatePrefix() throws {
        if prefix != nil && !remote { throw ValidationError("--prefix goes with --remote") }
    }

    /// The folder given, absolute and standardised (as push and sync spell its tracks' paths).
    var root: String? { folder.map { URL(fileURLWithPath: $0).standardizedFileURL.path } }

    /// Runs `body`, which reaches the bucket configured through `bucket` (--remote): whatever
    /// fails, there or before, is the command's failure.
    func listing<T>(
        _ global: GlobalOptions, _ body: (_ bucket: () throws -> UploadService) async throws -> T
    ) async throws(CommandFailure) -> T {
        var made: UploadService?
        do {
            return try await body {
                let service = try UploadService(settings: try global.settings(), options: RunOptions())
                made = service
                return service
            }
        } catch {
            // An endpoint refusing before it ever answered is the setup's fault (exit 3, with the hint), as for push.
            if let made { throw CommandFailure(await made.diagnose(error, subject: nil)) }
            throw CommandFailure(DownloadFailure.diagnosis(error) ?? Diagnosis(error))
        }
    }
}
