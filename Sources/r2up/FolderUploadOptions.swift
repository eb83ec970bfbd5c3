import ArgumentParser
import R2UpKit

/// The options `sync` and `watch` share: which files of the folder, under which prefix, with
/// which headers, what to delete once an upload or a copy is verified, and (`--delete`) what
/// to delete from the bucket once its file is gone.
struct FolderUploadOptions: ParsableArguments {
    @Option(help: "Key prefix, e.g. library/.")
    var prefix: String?

    @Option(help: "Only files matching this glob (repeatable; '*.flac' matches names, 'Live/*' paths).")
    var include: [String] = []

    @Option(help: "Leave out files matching this glob (repeatable).")
    var exclude: [String] = []

    @Flag(name: .customLong("no-default-excludes"), help: "Also take hidden files and *.part, *.tmp, … files.")
    var noDefaultExcludes = false

    @Flag(name: .customLong("delete-after"), help: "Delete each local file once its upload is verified (never anything remote).")
    var deleteAfter = false

    @Flag(
        name: .customLong("delete-moved"),
        help: "Delete a moved track's old object once the copy at its new key is verified (kept by default: its URL may be shared).")
    var deleteMoved = false

    @Flag(help: "Delete from the bucket the objects r2up uploaded from files now gone or moved (the folder's mirror).")
    var delete = false

    @Option(
        name: .customLong("delete-max"), parsing: .unconditional,
        help: ArgumentHelp("With --delete: allow up to N deletions at once (default: at most 10% of the folder's objects).", valueName: "N"))
    var deleteMax: Int?

    @Flag(help: "With --delete: no limit on how many objects are deleted at once.")
    var force = false

    @Flag(name: .customLong("follow-symlinks"), help: "Follow symbolic links (loops are reported, not followed).")
    var followSymlinks = false

    @OptionGroup var replace: ReplaceOptions

    @Option(name: .customLong("cache-control"), help: "Cache-Control header for the objects.")
    var cacheControl: String?

    @Option(name: .customLong("meta"), help: ArgumentHelp("User metadata stored with each object (x-amz-meta-KEY); repeatable.", valueName: "KEY=VALUE"))
    var meta: [String] = []

    func validate() throws {
        if let problem = UserMetadata.problem(meta) { throw ValidationError(problem) }
        try HeaderFlags.check(["--cache-control": cacheControl])
        if let prefix, let problem = ObjectKey.prefixProblem(prefix) { throw ValidationError(problem) }
        if (deleteMax != nil || force) && !delete { throw ValidationError("--delete-max and --force go with --delete") }
        if let deleteMax, deleteMax < 0 { throw ValidationError("--delete-max must be 0 or more, got \(deleteMax)") }
        for (flag, patterns) in [("--include", include), ("--exclude", exclude)] {
            for pattern in patterns {
                if let problem = SyncFilter.problem(pattern) {
                    throw ValidationError("\(flag) '\(pattern)' is not a valid glob: \(problem)")
                }
            }
        }
    }

    /// These choices in a sync's options (the rest keep their values).
    func apply(to options: inout SyncOptions) {
        options.prefix = prefix ?? ""
        options.filter = SyncFilter(includes: include, excludes: exclude, defaultExcludes: !noDefaultExcludes)
        options.deleteAfter = deleteAfter
        options.deleteMoved = deleteMoved
        options.mirror = MirrorOptions(delete: delete, deleteMax: deleteMax, force: force)
        options.replace = replace.policy
        options.followSymlinks = followSymlinks
        // `validate()` has refused a bad --meta before this runs.
        options.setAttributes(cacheControl: cacheControl, metadata: UserMetadata.parse(meta))
    }
}
