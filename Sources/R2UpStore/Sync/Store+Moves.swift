public import Foundation
internal import GRDB
public import R2UpModel

/// What `enqueueMoves` did with each move.
public struct MovesQueued: Sendable {
    /// Copies this run makes now, with what each new key must hold.
    public var jobs: [UploadJob] = []
    public var conditions: [UUID: WriteCondition?] = [:]
    /// Copies whose new key holds another track's upload (`EnqueueResult.keyHeldElsewhere`).
    public var heldElsewhere: Set<UUID> = []
    /// Copies that wait (held by another r2up, failed before and not yet due).
    public var waiting: [(job: UploadJob, disposition: JobDisposition)] = []
    /// Moves refused: the new key holds a third track's object. Nothing moved, nothing queued.
    public var conflicts: [(move: PlannedMove, conflict: KeyConflict)] = []
    /// Tracks that followed their file to a path with the same key: nothing to copy.
    public var renamed = 0
    /// Moves the store no longer agrees with (the track changed, or the new path has an
    /// uploaded track of its own): uploaded as usual.
    public var uploads: [PlannedUpload] = []

    public init() {}
}

extension Store {
    /// The path of the track that holds `key` in `bucket`, if one does.
    public func keyHolder(bucket: String, key: String) throws(StoreError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: #"SELECT path FROM tracks WHERE bucket = ? AND "key" = ? LIMIT 1"#, arguments: [bucket, key])
        }
    }

    /// The tracks under `folder` uploaded to `bucket` whose files are gone from their paths
    /// (`push DIR`'s side of `MovePlan`; sync finds them in its walk).
    /// `sizes`: only tracks of these sizes (a watch's batch: a move keeps its size), chosen by
    /// SQLite: the tracks whose objects stay after their files went (every file deleted, renamed
    /// or moved out) grow without end, and a watch's batch that read them all held them all in
    /// memory (the 2026-11-27 soak: 7,300 rows for a tree of 2,000 files, RSS rising with them).
    public func vanishedTracks(under folder: String, bucket: String, sizes: Set<Int64>? = nil) throws(StoreError) -> [VanishedTrack] {
        var prefix = folder
        while prefix.count > 1 && prefix.hasSuffix("/") { prefix.removeLast() }
        let select = #"""
            SELECT path, size, mtimeNs, "key", etag, device, inode, digest FROM tracks
            WHERE path >= ? AND path < ? AND uploadState = 'uploaded' AND bucket = ? AND "key" IS NOT NULL
            """#
        let range: [any DatabaseValueConvertible] = [prefix + "/", prefix + "0", bucket]
        let rows: [Row]
        if let sizes {
            // A few hundred sizes a query, well under SQLite's limit of bound values.
            let all = sizes.sorted()
            rows = try read { db in
                try stride(from: 0, to: all.count, by: 500).flatMap { start in
                    let chunk = all[start..<min(all.count, start + 500)]
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                    return try Row.fetchAll(
                        db, sql: select + " AND size IN (\(marks))", arguments: StatementArguments(range + chunk.map { $0 }))
                }
            }
        } else {
            rows = try read { db in try Row.fetchAll(db, sql: select, arguments: StatementArguments(range)) }
        }
        return rows.compactMap { row in
            let path: String = row[0]
            var info = stat()
            guard lstat(path, &info) != 0, errno == ENOENT else { return nil }
            return VanishedTrack(
                path: path, size: row[1], mtimeNs: row[2], key: row[3], etag: row[4], device: row[5], inode: row[6], digest: row[7])
        }
    }

    /// The uploaded tracks at `paths` in `bucket`, by path, as `MovePlan` knows tracks (a push to
    /// another key copies them from where they are).
    public func uploadedTracks(at paths: [String], bucket: String) throws(StoreError) -> [String: VanishedTrack] {
        guard !paths.isEmpty else { return [:] }
        return try read { db in
            var tracks: [String: VanishedTrack] = [:]
            let statement = try db.cachedStatement(sql: #"""
                SELECT path, size, mtimeNs, "key", etag, device, inode, digest FROM tracks
                WHERE path = ? AND uploadState = 'uploaded' AND bucket = ? AND "key" IS NOT NULL
                """#)
            for path in paths {
                guard let row = try Row.fetchOne(statement, arguments: [path, bucket]) else { continue }
                tracks[path] = VanishedTrack(
                    path: row[0], size: row[1], mtimeNs: row[2], key: row[3], etag: row[4], device: row[5], inode: row[6], digest: row[7])
            }
            return tracks
        }
    }

    /// The tracks follow their files (DESIGN §10), in ONE transaction: each track's path becomes
    /// its file's new path, keeping its history, state and identity, and a copy job makes its
    /// new key from its old object (`UploadJob.copySourceKey`). The new key is guarded as an
    /// upload's is (`enqueue`): a key holding a third track's object refuses the move, and
    /// nothing of it is written.
    public func enqueueMoves(
        _ moves: [PlannedMove], bucket: String, contentType: (PlannedMove) -> String, intent: EnqueueIntent = .scheduled,
        replace: ReplacePolicy = .guarded
    ) throws(StoreError) -> MovesQueued {
        let time = now()
        return try write { db in
            var result = MovesQueued()
            for move in moves {
                let file = move.upload.file
                let old = move.track
                let stillThere = try Row.fetchOne(
                    db, sql: #"SELECT size, "key", uploadState, bucket FROM tracks WHERE path = ?"#, arguments: [old.path])
                guard let stillThere, stillThere["key"] as String? == old.key, stillThere["size"] as Int64? == old.size,
                    stillThere["uploadState"] as String? == UploadState.uploaded.rawValue, stillThere["bucket"] as String? == bucket
                else {
                    result.uploads.append(move.upload)
                    continue
                }
                // (A track pushed to another key stays at its path: it is `here` itself.)
                if old.path != file.path,
                    let here = try Row.fetchOne(db, sql: #"SELECT "key" FROM tracks WHERE path = ?"#, arguments: [file.path])
                {
                    guard here["key"] as String? == nil else {
                        result.uploads.append(move.upload)
                        continue
                    }
                }
                try db.inSavepoint {
                    // A track at the new path that never reached the cloud gives way to the one that moved there.
                    try db.execute(sql: #"DELETE FROM tracks WHERE path = ? AND "key" IS NULL"#, arguments: [file.path])
                    try db.execute(
                        sql: """
                            UPDATE tracks SET path = ?, size = ?, mtimeNs = ?, device = ?, inode = ?, updatedAt = ?
                            WHERE path = ?
                            """,
                        arguments: [file.path, file.size, file.mtimeNs, file.device, file.inode, StoreDate.text(time), old.path])
                    if move.upload.key == old.key {
                        result.renamed += 1
                        return .commit
                    }
                    var job = UploadJob(
                        path: file.path, bucket: bucket, key: move.upload.key, contentType: contentType(move),
                        length: file.size, mtimeNs: file.mtimeNs, createdAt: time)
                    job.copySourceKey = old.key
                    job.copySourceETag = old.etag
                    job.digest = old.digest
                    var queued = try Self.enqueue(db, job, at: time, intent: intent, replace: replace)
                    if case .conflict(let conflict) = queued.disposition {
                        result.conflicts.append((move, conflict))
                        return .rollback
                    }
                    if !queued.isNew {
                        // An earlier job for this file and key (a copy that failed, or an upload): it copies now.
                        try db.execute(
                            sql: "UPDATE jobs SET copySourceKey = ?, copySourceETag = ?, digest = ? WHERE id = ?",
                            arguments: [old.key, old.etag, old.digest, queued.job.id.uuidString])
                        queued.job.copySourceKey = old.key
                        queued.job.copySourceETag = old.etag
                        queued.job.digest = old.digest
                    }
                    if queued.disposition == .ready {
                        result.jobs.append(queued.job)
                        result.conditions.updateValue(queued.condition, forKey: queued.job.id)
                        if queued.keyHeldElsewhere { result.heldElsewhere.insert(queued.job.id) }
                    } else {
                        result.waiting.append((queued.job, queued.disposition))
                    }
                    return .commit
                }
            }
            return result
        }
    }
}
