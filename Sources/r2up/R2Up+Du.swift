import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Du: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the space tracks take here and in the bucket, per folder.",
            discussion: """
                Per folder: the tracks, the bytes on disk, in the bucket (the store's view: each track's \
                cloud copy as recorded), only local (not yet safe: never uploaded, or changed since), \
                only in the cloud (offloaded), and in both (what `offload` can free); totals at the end, \
                where an object several tracks point at (a pushed folder pulled elsewhere) is in the bucket once. \
                With DIR, every file under it that push would take, known or not; without, every track \
                r2up knows. No request to the bucket unless --remote, which lists the prefix and says \
                where the bucket disagrees with the store.
                """)

        @OptionGroup var global: GlobalOptions

        @OptionGroup var view: LibraryViewOptions<Help>

        enum Help: LibraryViewHelp {
            static let json = "Print the folders and totals as JSON."
            static let remote = "Also list the bucket under the folder's prefix and compare it with the store."
            static let prefix = "With --remote: the key prefix to list (default: the one the folder's tracks agree on; the whole bucket without DIR)."
            static let by = "Group by folder, album or artist (default: album when tracks carry tags, else folder; with DIR)."
            static let folder = "A folder of tracks (default: every track r2up knows)."
        }

        func validate() throws {
            try view.validatePrefix()
            if view.by != nil && view.by != .folder && view.folder == nil { throw ValidationError("--by \(view.by?.rawValue ?? "") needs a folder: r2up du DIR --by album") }
        }

        func run() async throws {
            let usage: SpaceUsage
            let root = view.root
            let store: LocalStore?
            do {
                store = try ReadOnlyStore.open(global)
                if let root {
                    var info = stat()
                    if stat(root, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
                        throw CommandFailure(Diagnosis(
                            category: .badInput, message: "\(TextColumns.printable(root)) is not a folder; du takes a folder (or nothing, for every track)"))
                    }
                    var tags: [String: AudioTags] = [:]
                    if view.by != .folder, let store {
                        tags = try store.tags(under: root)
                    }
                    let grouping = StatusReport.grouping(view.by, tags: tags)
                    usage = try SpaceUsage.measure(
                        folder: root, database: store, groups: SpaceUsage.groupNames(tags, by: grouping), by: grouping)
                    if usage.groups.isEmpty && stat(root, &info) != 0 {
                        throw CommandFailure(Diagnosis(category: .badInput, message: "\(TextColumns.printable(root)): no such folder"))
                    }
                } else {
                    usage = try SpaceUsage.measure(database: store)
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw CommandFailure(error)
            }
            for problem in usage.problems where problem.unreadFolder {
                Terminal.error("r2up: \(TextColumns.printable(problem.path)): \(problem.message); its tracks count as last recorded")
            }
            var remoteSpace: RemoteSpace?
            if view.remote { remoteSpace = try await listRemote(root: root, store: store) }
            if view.json {
                Terminal.output(JSONOutput.encode(DuJSON(usage: usage, remote: remoteSpace)))
                return
            }
            let byFolder = usage.groups.allSatisfy { $0.kind == .folder }
            let header = [byFolder ? "FOLDER" : "GROUP", "TRACKS", "ON DISK", "IN BUCKET", "LOCAL ONLY", "CLOUD ONLY", "BOTH"]
            var rows = [header]
            for group in usage.groups { rows.append(Self.row(TextColumns.printable(group.folder), group.counts)) }
            rows.append(Self.row("TOTAL", usage.totals))
            let alignments: [TextColumns.Alignment] = [.left] + Array(repeating: .right, count: 6)
            for line in TextColumns.lines(rows, alignments: alignments) { Terminal.output(line) }
            if let remoteSpace { Terminal.output(Self.line(remoteSpace)) }
        }

        static func row(_ name: String, _ counts: SpaceCounts) -> [String] {
            [name, "\(counts.tracks)"] + [counts.onDisk, counts.inBucket, counts.localOnly, counts.cloudOnly, counts.both].map(ByteCount.string)
        }

        /// "Bucket under 'music/': 12 objects (30 MB); 1 track's object missing (8 MB); 2 objects no track knows (1 MB)."
        static func line(_ remote: RemoteSpace) -> String {
            var line = "Bucket under '\(TextColumns.printable(remote.prefix))': \(remote.objects) \(remote.objects == 1 ? "object" : "objects") (\(ByteCount.string(remote.bytes)))"
            if remote.missing > 0 {
                line += "; \(remote.missing) \(remote.missing == 1 ? "track's object" : "tracks' objects") missing (\(ByteCount.string(remote.missingBytes)))"
            }
            if remote.replaced > 0 { line += "; \(remote.replaced) replaced since upload" }
            if remote.unknownObjects > 0 {
                line += "; \(remote.unknownObjects) \(remote.unknownObjects == 1 ? "object" : "objects") no track knows (\(ByteCount.string(remote.unknownBytes)))"
            }
            if remote.missing == 0 && remote.replaced == 0 { line += "; every track's cloud copy is there as recorded" }
            return line + "."
        }

        private func listRemote(root: String?, store: LocalStore?) async throws -> RemoteSpace {
            // No track here: no prefix to infer, and listing the whole bucket would call every object unknown.
            if let root, view.prefix == nil, ((try? store?.tracks(under: root)) ?? nil)?.isEmpty ?? true {
                throw CommandFailure(Diagnosis(
                    category: .badInput,
                    message: "\(TextColumns.printable(root)): r2up knows no track here, so --remote has no prefix to list; give --prefix"))
            }
            return try await view.listing(global) { bucket in
                let known = try store?.tracks(under: root ?? "/") ?? []
                // The folder's prefix when its tracks agree on one, else what all their keys share.
                var listed = view.prefix ?? root.flatMap { CloudOnly.inferPrefix(folder: $0, tracks: known) } ?? RemoteSpace.commonPrefix(known)
                if !listed.isEmpty && !listed.hasSuffix("/") { listed += "/" }
                return try await RemoteSpace.check(service: try bucket(), prefix: listed, known: known)
            }
        }
    }
}

/// `du --json`.
struct DuJSON: Encodable {
    struct Folder: Encodable {
        /// One of the three names the group, by its kind; none for the totals.
        var folder: String?
        var album: String?
        var artist: String?
        var tracks: Int
        var onDisk: Int64
        var inBucket: Int64
        var localOnly: Int64
        var cloudOnly: Int64
        var both: Int64

        init(_ name: String?, _ counts: SpaceCounts, kind: StatusGrouping = .folder) {
            switch kind {
            case .folder: folder = name
            case .album: album = name
            case .artist: artist = name
            }
            tracks = counts.tracks
            onDisk = counts.onDisk
            inBucket = counts.inBucket
            localOnly = counts.localOnly
            cloudOnly = counts.cloudOnly
            both = counts.both
        }
    }

    var folders: [Folder]
    var totals: Folder
    var remote: RemoteSpace?

    init(usage: SpaceUsage, remote: RemoteSpace?) {
        folders = usage.groups.map { Folder($0.folder, $0.counts, kind: $0.kind) }
        totals = Folder(nil, usage.totals)
        self.remote = remote
    }
}
