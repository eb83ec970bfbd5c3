import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Rm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete objects from the bucket: the keys given (- reads them from stdin), or a folder with --prefix.",
            discussion: """
                Tracks that pointed at a deleted object become local only; their history rows stay \
                and say the object was deleted. --prefix P is a folder, as in ls: "A/Low Tide" deletes \
                A/Low Tide/… and never A/Low Tide (Remaster)/…; --raw-prefix P deletes every key that \
                starts with P as typed. Either lists what it would delete first; off a terminal it needs \
                --yes, on one it asks. --dry-run prints what would go and deletes nothing. An object \
                that is the only copy of an offloaded track (its file gone: cloud only) is not deleted: \
                one line names the file, nothing is deleted, exit 2 (r2up fetch it first, or give --force).
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "Delete the folder P: every object under P/ (at any depth); a trailing / is implied.")
        var prefix: String?

        @Option(name: .customLong("raw-prefix"), help: "Delete every object whose key starts with P exactly as typed.")
        var rawPrefix: String?

        @Flag(name: .customLong("dry-run"), help: "Print what would be deleted; delete nothing.")
        var dryRun = false

        @Flag(help: "Delete a --prefix without asking.")
        var yes = false

        @Flag(help: "Also delete objects that are the only copy of an offloaded (cloud only) track.")
        var force = false

        @Argument(help: "Keys of the objects to delete; - reads them from stdin, one a line.")
        var keys: [String] = []

        func validate() throws {
            let prefixes = [prefix, rawPrefix].compactMap { $0 }.count
            if keys.isEmpty && prefixes == 0 { throw ValidationError("give the keys to delete, - to read them from stdin, or --prefix P") }
            if !keys.isEmpty && prefixes > 0 { throw ValidationError("give keys or --prefix, not both") }
            if prefixes > 1 { throw ValidationError("give --prefix or --raw-prefix, not both") }
        }

        /// What a listing deletes: the folder for --prefix, the text as typed for --raw-prefix;
        /// nil for keys. Throws for a prefix that names the whole bucket.
        func listedPrefix() throws(CommandFailure) -> String? {
            if let prefix {
                // "", "/" or "//": the whole bucket, never what someone meant by a folder.
                guard prefix.contains(where: { $0 != "/" }) else {
                    throw CommandFailure(Diagnosis(
                        category: .badInput,
                        message: "rm --prefix '\(TextColumns.printable(prefix))' would be the whole bucket; nothing deleted (name a folder, or keys)"))
                }
                return prefix.hasSuffix("/") ? prefix : prefix + "/"
            }
            if let rawPrefix {
                guard !rawPrefix.isEmpty else {
                    throw CommandFailure(Diagnosis(
                        category: .badInput, message: "rm --raw-prefix '' would be the whole bucket; nothing deleted"))
                }
                return rawPrefix
            }
            return nil
        }

        /// The keys given, or read from stdin for `-` (one a line, blank lines skipped).
        func givenKeys() -> [String] {
            guard keys == ["-"] else { return keys }
            var read: [String] = []
            while let line = readLine(strippingNewline: true) {
                let key = line.hasSuffix("\r") ? String(line.dropLast()) : line
                if !key.isEmpty { read.append(key) }
            }
            return read
        }

        func run() async throws {
            let prefix = try listedPrefix()
            let (_, service, store) = try global.open()
            guard let targets = try await targets(prefix: prefix, service: service) else { return }
            if !force { try Self.refuseOnlyCopies(targets, bucket: service.bucket, store: store) }
            if dryRun {
                for key in targets { Terminal.output("would delete \(TextColumns.printable(key))") }
                return
            }
            if prefix != nil && !yes {
                guard try Self.confirm(targets) else { return }
            }
            let (deleted, failure) = await Self.delete(targets, service: service)
            do {
                if !deleted.isEmpty {
                    try store.recordDeletions(bucket: service.bucket, keys: deleted)
                }
            } catch {
                throw CommandFailure(error)
            }
            if let failure { throw CommandFailure(await service.diagnose(failure, subject: nil)) }
        }

        /// The keys to delete: listed under the prefix, or given; nil when a prefix holds none
        /// (said on stderr: nothing to do).
        private func targets(prefix: String?, service: UploadService) async throws(CommandFailure) -> [String]? {
            var targets: [String]
            if let prefix {
                do {
                    targets = try await service.objects(startingWith: prefix).map(\.key)
                } catch {
                    throw CommandFailure(await service.diagnose(error, subject: nil))
                }
                if targets.isEmpty {
                    if !global.quiet { Terminal.error("No objects under \(TextColumns.printable(prefix)).") }
                    return nil
                }
            } else {
                do {
                    targets = try givenKeys().map { try KeyRule.checked($0) }
                } catch {
                    throw CommandFailure(error)
                }
                if targets.isEmpty {
                    throw CommandFailure(Diagnosis(category: .badInput, message: "rm -: no keys on stdin; nothing deleted"))
                }
            }
            return targets
        }

        /// Lists what a prefix deletes and asks on the terminal; false: the answer was no.
        /// Off a terminal nothing is deleted without --yes.
        private static func confirm(_ targets: [String]) throws(CommandFailure) -> Bool {
            for key in targets { Terminal.output("to delete: \(TextColumns.printable(key))") }
            let objects = "\(targets.count) object\(targets.count == 1 ? "" : "s")"
            let question = "Delete these \(objects)? [y/N] "
            guard Terminal.stdinIsTerminal else {
                Terminal.error("r2up: not deleting \(objects) without --yes (no terminal to ask on)")
                throw CommandFailure(category: .badInput)
            }
            FileHandle.standardError.write(Data(question.utf8))
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            guard answer == "y" || answer == "yes" else {
                Terminal.error("Nothing deleted.")
                return false
            }
            return true
        }

        /// DeleteObject each, eight at a time, printed in key order; the first failure stops the rest.
        private static func delete(_ targets: [String], service: UploadService) async -> (deleted: [String], failure: (any Error)?) {
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
                                try await service.deleteObject(key: key)
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
            return (deleted, failure)
        }

        /// Objects that are the only copy of an offloaded track stop the whole rm (exit 2, nothing
        /// deleted): one line per file, the first few named, the rest counted.
        static func refuseOnlyCopies(_ keys: [String], bucket: String, store: LocalStore) throws(CommandFailure) {
            let only: [RemoveGuard.OnlyCopy]
            do { only = try RemoveGuard.onlyCopies(of: keys, bucket: bucket, database: store) } catch { throw CommandFailure(error) }
            guard !only.isEmpty else { return }
            for copy in only.prefix(namedOnlyCopies) {
                Terminal.error(
                    "r2up: \(TextColumns.printable(copy.key)) is the only copy of \(TextColumns.printable(copy.path)) (offloaded: cloud only); "
                        + "nothing deleted (r2up fetch it first, or --force)")
            }
            if only.count > namedOnlyCopies {
                Terminal.error("r2up: and \(only.count - namedOnlyCopies) more objects that are the only copy of an offloaded track")
            }
            throw CommandFailure(category: .badInput)
        }

        static let namedOnlyCopies = 10
    }
}
