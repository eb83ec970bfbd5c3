import Foundation
package import R2UpModel
package import R2UpStore
package import R2UpTransfer

/// What `push FILE…|DIR…` will send (issue 14, item 7: the library decides, the CLI prints):
/// each file as given, each folder's eligible tracks (`TrackFolder`), with their keys (`--key`,
/// `--prefix`, `--key-template`), refused as a whole when two files map to one key.
package struct PushPlan: Sendable {
    /// A file or folder that could not be taken, before any upload.
    package struct Skipped: Sendable, Equatable {
        /// Printable.
        package var path: String
        package var message: String
        package var category: FailureCategory
    }

    /// A refusal of the whole push (bad input): nothing is sent.
    package struct Refusal: Error, Sendable, Equatable {
        package var diagnosis: Diagnosis
    }

    package var requests: [PushRequest] = []
    /// Tracks whose files moved inside a pushed folder: copied in the bucket, not sent
    /// (`Store.enqueueMoves`), when a bucket was given.
    package var moves: [PlannedMove] = []
    package var skipped: [Skipped] = []
    /// Folders with nothing to push, each with the line that says so.
    package var nothingToPush: [String] = []
    /// Folders' files left alone: uploaded and unchanged at the key this push gives them.
    package var unchanged: [(path: String, key: String)] = []
    /// Whether a folder was named (a folder push ends with a summary line).
    package var hasFolders = false

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

    /// The request for a folder's file (a move the store turned back into an upload too).
    package func request(for upload: PlannedUpload) -> PushRequest {
        PushRequest(scanned: upload.file, key: upload.key, attributes: attributes(upload.file.path))
    }

    package init(
        paths: [String], undecodable: [String: [UInt8]] = [:], key: String?, prefix: String?, template: KeyTemplate?,
        onlyFailed: Bool, store: Store, tags: TagResolver, bucket: String? = nil, folderNames: Bool = false,
        attributes: @escaping @Sendable (String) -> ObjectAttributes
    ) throws {
        self.attributes = attributes
        for path in paths {
            if let raw = undecodable[path] {
                // Swift repaired the bytes to U+FFFD: that spelling names no file, so say what is wrong.
                skipped.append(Skipped(path: FilePath.escaped(raw), message: FilePath.notUTF8, category: .badInput))
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                if key != nil {
                    throw Refusal(diagnosis: Diagnosis(category: .badInput, message: "\(OptionName.key.option) cannot name a folder's files; use \(OptionName.prefix.option)"))
                }
                hasFolders = true
                let named = folderNames ? Self.folderName(path) : nil
                let found = try TrackFolder.scan(path, store: store, bucket: bucket, onlyFailed: onlyFailed)
                // The folder named cannot be read: bad input (exit 2), as sync says; within it, a failed upload (1).
                let root = URL(fileURLWithPath: path).standardizedFileURL.path
                skipped += found.problems.map {
                    Skipped(path: $0.path, message: $0.message, category: $0.category(root: root) ?? .uploadFailed)
                }
                // Keys from a template need every track's tags; otherwise the feed looks up only the uploads'.
                if template != nil { try tags.preload(under: path) }
                let keyer = template.map { TemplateKeys(template: $0, tags: tags) }
                func keyOf(_ file: ScannedFile) -> String {
                    let name = keyer?.key(path: file.path, relativePath: file.relativePath)
                    return ObjectKey.forFile(named: name ?? named.map { $0 + "/" + file.relativePath } ?? file.relativePath, prefix: prefix)
                }
                var planned = found.files.map { PlannedUpload(file: $0.file, key: keyOf($0.file), reason: $0.isKnown ? .changed : .new) }
                // Uploaded, unchanged tracks whose key this push names differently (another --prefix or
                // template): the bytes are in the bucket, so the intake makes their new keys by copies.
                if bucket != nil && !onlyFailed {
                    planned += found.uploaded.compactMap { item in
                        let newKey = keyOf(item.file)
                        return newKey == item.key ? nil : PlannedUpload(file: item.file, key: newKey, reason: .changed)
                    }
                }
                if let bucket, !onlyFailed {
                    let vanished = planned.contains { $0.reason == .new } ? try store.vanishedTracks(under: root, bucket: bucket) : []
                    let followed = try Intake.follow(planned, vanished: vanished, store: store, bucket: bucket)
                    moves += followed.moves
                    planned = followed.uploads
                    // A track uploaded unchanged that the store no longer agrees with stays as it is.
                    let waiting = Set(found.uploaded.map { Array($0.file.path.utf8) })
                    planned.removeAll { $0.reason == .changed && waiting.contains(Array($0.file.path.utf8)) }
                }
                unchanged += found.uploaded.filter { keyOf($0.file) == $0.key }.map { ($0.file.path, $0.key) }
                if planned.isEmpty && found.problems.isEmpty && !moves.contains(where: { $0.upload.file.path.hasPrefix(root + "/") }) {
                    nothingToPush.append(
                        onlyFailed
                            ? "\(TextColumns.printable(path)): no failed tracks to upload again"
                            : "\(TextColumns.printable(path)): nothing to upload (every track is uploaded and unchanged)")
                }
                requests += planned.map { request(for: $0) }
            } else {
                let name = URL(fileURLWithPath: path).lastPathComponent
                let templated = template.map { TemplateKeys(template: $0, tags: tags).key(path: FilePath.absolute(path), relativePath: name) }
                requests.append(PushRequest(
                    path: path, key: key ?? ObjectKey.forFile(named: templated ?? name, prefix: prefix), attributes: attributes(path)))
            }
        }
        // A move's new key clashes like an upload's.
        let all = requests + moves.map { PushRequest(path: $0.upload.file.path, key: $0.upload.key, attributes: ObjectAttributes()) }
        try Self.checkKeys(all, templated: template != nil)
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
    package static func checkKeys(_ requests: [PushRequest], templated: Bool) throws(Refusal) {
        if let clash = SyncPlan.keyClashes(requests.map { (path: $0.path, key: $0.key) }).first {
            throw Refusal(diagnosis: Diagnosis(
                category: .badInput,
                message: SyncPlan.clashMessage(paths: clash.paths, key: clash.key, templated: templated) + "; nothing was sent"))
        }
        for request in requests where templated {
            if request.key.isEmpty || request.key.hasSuffix("/") {
                throw Refusal(diagnosis: Diagnosis(
                    category: .badInput, message: "\(request.path): \(OptionName.keyTemplate.option) makes an empty key for this file; change the template; nothing was sent"))
            }
            if request.key.utf8.count > ObjectKey.maximumBytes {
                throw Refusal(diagnosis: Diagnosis(
                    category: .badInput,
                    message: "\(request.path): \(OptionName.keyTemplate.option) makes a key of \(request.key.utf8.count) bytes; S3 and R2 allow at most \(ObjectKey.maximumBytes); shorten the template; nothing was sent"))
            }
        }
    }
}
