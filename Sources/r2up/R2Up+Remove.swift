import ArgumentParser
import Foundation
import R2UpKit
import R2UpModel
import R2UpStore
import R2UpTransfer

extension R2Up {
    struct Rm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete objects from the bucket: the keys given, or every object under --prefix.",
            discussion: """
                Tracks that pointed at a deleted object become local only; their history rows stay \
                and say the object was deleted. --prefix lists what it would delete first; off a \
                terminal it needs --yes, on one it asks. --dry-run prints what would go and deletes nothing.
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "Delete every object whose key starts with P (at any depth).")
        var prefix: String?

        @Flag(name: .customLong("dry-run"), help: "Print what would be deleted; delete nothing.")
        var dryRun = false

        @Flag(help: "Delete a --prefix without asking.")
        var yes = false

        @Argument(help: "Keys of the objects to delete.")
        var keys: [String] = []

        func validate() throws {
            if keys.isEmpty && prefix == nil { throw ValidationError("give the keys to delete, or --prefix P") }
            if !keys.isEmpty && prefix != nil { throw ValidationError("give keys or --prefix, not both") }
            if let prefix, prefix.isEmpty {
                throw ValidationError("--prefix must not be empty (that would be the whole bucket)")
            }
        }

        func run() async throws {
            let settings: Settings
            let service: UploadService
            do {
                settings = try global.settings()
                service = try UploadService(settings: settings, options: RunOptions())
            } catch {
                throw CommandFailure(error)
            }
            var targets: [String]
            if let prefix {
                do {
                    targets = try await service.objects(startingWith: prefix).map(\.key)
                } catch {
                    throw CommandFailure(await service.diagnose(error, subject: nil))
                }
                if targets.isEmpty {
                    if !global.quiet { Terminal.error("No objects under \(TextColumns.printable(prefix)).") }
                    return
                }
            } else {
                do {
                    targets = try keys.map { try ObjectKey.validated($0) }
                } catch {
                    throw CommandFailure(error)
                }
            }
            if dryRun {
                for key in targets { Terminal.output("would delete \(TextColumns.printable(key))") }
                return
            }
            if prefix != nil && !yes {
                for key in targets { Terminal.output("to delete: \(TextColumns.printable(key))") }
                let objects = "\(targets.count) object\(targets.count == 1 ? "" : "s")"
                let question = "Delete these \(objects)? [y/N] "
                guard Terminal.stdinIsTerminal else {
                    Terminal.error("r2up: not deleting \(objects) without --yes (no terminal to ask on)")
                    throw CommandFailure(status: .badInput)
                }
                FileHandle.standardError.write(Data(question.utf8))
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                guard answer == "y" || answer == "yes" else {
                    Terminal.error("Nothing deleted.")
                    return
                }
            }
            // DeleteObject each, eight at a time, printed in key order; the first failure stops the rest.
            var deleted: [String] = []
            var failure: (any Error)?
            var start = 0
            while start < targets.count && failure == nil {
                let batch = Array(targets[start..<min(start + 8, targets.count)])
                start += batch.count
                let results = await withTaskGroup(of: (Int, (any Error)?).self) { group in
                    for (index, key) in batch.enumerated() {
                        group.addTask {
                            do {
                                try await service.client.deleteObject(bucket: service.bucket, key: key)
                                return (index, nil)
                            } catch {
                                return (index, error)
                            }
                        }
                    }
                    var results = [(any Error)?](repeating: nil, count: batch.count)
                    for await (index, error) in group { results[index] = error }
                    return results
                }
                for (key, error) in zip(batch, results) {
                    if let error {
                        failure = failure ?? error
                    } else {
                        deleted.append(key)
                        Terminal.output("deleted \(TextColumns.printable(key))")
                    }
                }
            }
            do {
                if !deleted.isEmpty {
                    try Store(path: settings.database.value).recordDeletions(bucket: service.bucket, keys: deleted)
                }
            } catch {
                throw CommandFailure(error)
            }
            if let failure { throw CommandFailure(await service.diagnose(failure, subject: nil)) }
        }
    }
}
