import Foundation
public import R2UpModel
public import R2UpStore
public import R2UpTransfer

/// What `push FILE…|DIR…` will send (issue 14, item 7: the library decides, the CLI prints):
/// each file as given, each folder's eligible tracks (`TrackFolder`), with their keys (`--key`,
/// `--prefix`, `--key-template`), refused as a whole when two files map to one key.
public struct PushPlan: Sendable {
    /// A file or folder that could not be taken, before any upload.
    public struct Skipped: Sendable, Equatable {
        /// Printable.
        public var path: String
        public var message: String
        public var status: ExitStatus
    }

    /// A refusal of the whole push (exit 2): nothing is sent.
    public struct Refusal: Error, Sendable, Equatable {
        public var diagnosis: Diagnosis
    }

    public var requests: [PushRequest] = []
    /// Tracks whose files moved inside a pushed folder: copied in the bucket, not sent
    /// (`Store.enqueueMoves`), when a bucket was given.
    public var moves: [PlannedMove] = []
    public var skipped: [Skipped] = []
    /// Folders with nothing to push, each with the line that says so.
    public var nothingToPush: [String] = []
    /// Folders' files left alone: uploaded and unchanged at the key this push gives them.
    public var unchanged: [(path: String, key: String)] = []
    /// Whether a folder was named (a folder push ends with a summary line).
    public var hasFolders = false

    /// - Parameters:
    ///   - paths: the command line's files and folders.
    ///   - undecodable: arguments whose bytes are not UTF-8, by the repaired String Swift made of them.
    ///   - key: `--key` (one file only).
    ///   - prefix: `--prefix`.
    ///   - template: `--key-template`.
    ///   - onlyFailed: `--retry-failed`: a folder's failed tracks only.
    ///   - attributes: the attributes of a file's request.
    ///   - tags: the tags a template reads (preloaded here for each folder).
    ///   - bucket: where the push goes; a folder's new files are matched with its vanished
    ///     tracks there (`MovePlan`). nil: no moves.
    ///   - folderNames: a folder named without a trailing `/` keeps its name in the keys
    ///     (`Album/01.m4a`, as `cp -r` and rsync do); `DIR/` gives its contents. False: always its contents.
    /// The attributes each request gets.
    private let attributes: @Sendable (String) -> ObjectAttributes

    /// The request for a file (a move the store turned back into an upload).
    public func request(path: String, key: String) -> PushRequest {
        PushRequest(path: path, key: key, attributes: attributes(path), unlessUploaded: true)
    }

    public init(
        paths: [String], undecodable: [String: [UInt8]] = [:], key: String?, prefix: String?, template: KeyTemplate?,
        onlyFailed: Bool, store: Store, tags: TagResolver, bucket: String? = nil, folderNames: Bool = false,
        attributes: @escaping @Sendable (String) -> ObjectAttributes
    ) throws {
        self.attributes = attributes
        for path in paths {
            if let raw = undecodable[path] {
                // Swift repaired the bytes to U+FFFD: that spelling names no file, so say what is wrong.
                skipped.append(Skipped(path: FilePath.escaped(raw), message: FilePath.notUTF8, status: .badInput))
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                if key != nil {
                    throw Refusal(diagnosis: Diagnosis(status: .badInput, message: "--key cannot name a folder's files; use --prefix"))
                }
                hasFolders = true
                let named = folderNames ? Self.folderName(path) : nil
                let keyOf = { (file: ScannedFile) in
                    let name = template.map { $0.key(tags: tags.tags(path: file.path), relativePath: file.relativePath) }
                    return ObjectKey.forFile(named: name ?? named.map { $0 + "/" + file.relativePath } ?? file.relativePath, prefix: prefix)
                }
                let found = try TrackFolder.scan(path, store: store, onlyFailed: onlyFailed)
                // The folder named cannot be read: bad input (exit 2), as sync says; within it, a failed upload (1).
                let root = URL(fileURLWithPath: path).standardizedFileURL.path
                skipped += found.problems.map {
                    Skipped(path: $0.path, message: $0.message, status: $0.exitStatus(root: root) ?? .uploadFailed)
                }
                // Keys from a template need every track's tags; otherwise the feed looks up only the uploads'.
                if template != nil { try tags.preload(under: path) }
                // Uploaded, unchanged tracks whose key this push names differently (another --prefix
                // or template): the bytes are in the bucket, so their new keys are server-side copies.
                let rekeyed = bucket == nil || onlyFailed ? [] : try Self.rekeyed(found.uploaded, bucket: bucket ?? "", store: store, keyOf: keyOf)
                moves += rekeyed
                let rekeyedPaths = Set(rekeyed.map(\.upload.file.path))
                unchanged += found.uploaded.filter { !rekeyedPaths.contains($0.file.path) }.map { ($0.file.path, $0.key) }
                if found.files.isEmpty && found.problems.isEmpty && rekeyed.isEmpty {
                    nothingToPush.append(
                        onlyFailed
                            ? "\(TextColumns.printable(path)): no failed tracks to upload again"
                            : "\(TextColumns.printable(path)): nothing to upload (every track is uploaded and unchanged)")
                }
                var planned: [PlannedUpload] = []
                for (file, isKnown) in found.files {
                    planned.append(PlannedUpload(file: file, key: keyOf(file), reason: isKnown ? .changed : .new))
                }
                if let bucket, !onlyFailed, planned.contains(where: { $0.reason == .new }) {
                    let root = URL(fileURLWithPath: path).standardizedFileURL.path
                    let matched = MovePlan.match(planned, vanished: try store.vanishedTracks(under: root, bucket: bucket)) {
                        file, recorded in
                        guard let local = try? LocalFile(path: file.path), local.size == file.size else { return nil }
                        return try? ContentDigest.of(local, like: recorded)
                    }
                    moves += matched.moves
                    planned = matched.uploads
                }
                for upload in planned {
                    requests.append(PushRequest(
                        path: upload.file.path, key: upload.key, attributes: attributes(upload.file.path), unlessUploaded: true,
                        seen: SeenFile(size: upload.file.size, mtimeNs: upload.file.mtimeNs)))
                }
            } else {
                let name = URL(fileURLWithPath: path).lastPathComponent
                let templated = template.map { $0.key(tags: tags.tags(path: path), relativePath: name) }
                requests.append(PushRequest(
                    path: path, key: key ?? ObjectKey.forFile(named: templated ?? name, prefix: prefix), attributes: attributes(path)))
            }
        }
        // A move's new key clashes like an upload's.
        let all = requests + moves.map { PushRequest(path: $0.upload.file.path, key: $0.upload.key, attributes: ObjectAttributes()) }
        try Self.checkKeys(all, templated: template != nil)
    }

    /// Uploaded, unchanged tracks in `bucket` whose key this push names differently (another
    /// --prefix or template, the folder's name): the bytes are there, so their new keys are copies.
    private static func rekeyed(
        _ uploaded: [(file: ScannedFile, bucket: String, key: String)], bucket: String, store: Store, keyOf: (ScannedFile) -> String
    ) throws -> [PlannedMove] {
        var elsewhere: [(file: ScannedFile, key: String, oldKey: String)] = []
        for (file, trackBucket, oldKey) in uploaded where trackBucket == bucket {
            let key = keyOf(file)
            if key != oldKey { elsewhere.append((file, key, oldKey)) }
        }
        let tracks = try store.uploadedTracks(at: elsewhere.map(\.file.path), bucket: bucket)
        return elsewhere.compactMap { item in
            guard let track = tracks[item.file.path], track.key == item.oldKey else { return nil }
            return PlannedMove(upload: PlannedUpload(file: item.file, key: item.key, reason: .new), track: track)
        }
    }

    /// The name a folder keeps in its keys: its last component, unless the path ends with `/`
    /// (or names `.` or `..`), which gives its contents, as rsync reads a trailing slash.
    static func folderName(_ path: String) -> String? {
        guard !path.hasSuffix("/") else { return nil }
        guard let last = path.split(separator: "/").last, last != ".", last != ".." else { return nil }
        return ObjectKey.nfc(String(last))
    }

    /// Two files for one key (names that differ only in Unicode normalisation, a --prefix
    /// or --key-template that folds them together), or a templated key over 1,024 bytes,
    /// stop the push before anything is sent (exit 2), naming the files.
    public static func checkKeys(_ requests: [PushRequest], templated: Bool) throws(Refusal) {
        if let clash = SyncPlan.keyClashes(requests.map { (path: $0.path, key: $0.key) }).first {
            throw Refusal(diagnosis: Diagnosis(
                status: .badInput,
                message: SyncPlan.clashMessage(paths: clash.paths, key: clash.key, templated: templated) + "; nothing was sent"))
        }
        for request in requests where templated {
            if request.key.isEmpty || request.key.hasSuffix("/") {
                throw Refusal(diagnosis: Diagnosis(
                    status: .badInput, message: "\(request.path): --key-template makes an empty key for this file; change the template; nothing was sent"))
            }
            if request.key.utf8.count > ObjectKey.maximumBytes {
                throw Refusal(diagnosis: Diagnosis(
                    status: .badInput,
                    message: "\(request.path): --key-template makes a key of \(request.key.utf8.count) bytes; S3 and R2 allow at most \(ObjectKey.maximumBytes); shorten the template; nothing was sent"))
            }
        }
    }
}
