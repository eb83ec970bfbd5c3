import ArgumentParser
import Foundation
import Uploader

extension R2Up {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload files and print their public URLs.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions

        @Option(help: "Object key (one file only; default: the prefix and the file's name).")
        var key: String?

        @Option(help: "Key prefix, e.g. albums/2026/.")
        var prefix: String?

        @Option(name: .customLong("content-type"), help: "Content type (default: from the extension).")
        var contentType: String?

        @Option(name: .customLong("cache-control"), help: "Cache-Control header for the objects.")
        var cacheControl: String?

        @Flag(help: "Print a JSON array of the uploads instead of URLs.")
        var json = false

        @Argument(help: "Files to upload.")
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("give at least one file to push") }
            if key != nil && files.count > 1 { throw ValidationError("--key needs exactly one file") }
        }

        func run() async throws {
            let settings: Settings
            let service: UploadService
            do {
                settings = try global.settings()
                service = try UploadService(settings: settings, options: transfer.runOptions)
            } catch {
                throw CommandFailure(error)
            }
            var worst = ExitStatus.success
            var results: [PushedFile] = []
            for path in files {
                let name = URL(fileURLWithPath: path).lastPathComponent
                let request = PushRequest(
                    path: path, key: key ?? ObjectKey.forFile(named: name, prefix: prefix),
                    attributes: ObjectAttributes(
                        contentType: contentType ?? ContentType.forFile(named: name), cacheControl: cacheControl))
                do {
                    let outcome = try await service.upload(request)
                    let url = service.publicURL(for: outcome.key)
                    results.append(PushedFile(file: path, key: outcome.key, url: url, size: outcome.size, etag: outcome.etag))
                    if !json && !global.quiet { Terminal.output(url) }
                } catch {
                    let diagnosis = await service.diagnose(error, subject: path)
                    Terminal.error("r2up: \(diagnosis.message)")
                    // A bad endpoint or credentials fail every file alike: stop at the first.
                    if diagnosis.status == .configuration { throw CommandFailure(status: .configuration) }
                    if diagnosis.status.rawValue > worst.rawValue { worst = diagnosis.status }
                }
            }
            if json { Terminal.output(JSONOutput.encode(results)) }
            if worst != .success { throw CommandFailure(status: worst) }
        }
    }
}

/// One line of `push --json`.
struct PushedFile: Codable {
    var file: String
    var key: String
    var url: String
    var size: Int64
    var etag: String
}
