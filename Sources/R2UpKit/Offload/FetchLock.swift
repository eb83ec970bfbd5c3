import Foundation

/// One fetch of a track at a time across processes: two fetches of one folder (two terminals)
/// would share the track's temporary file, and the loser's writes landed in the winner's file
/// after its mtime was set, leaving a fetched track that showed as changed since upload. An
/// `flock` on a hidden `.NAME.r2up-lock` beside the track, taken without waiting, removed after.
struct FetchLock {
    enum Taken {
        /// Ours until `release`.
        case held(FetchLock)
        /// Another r2up holds it: that one is fetching the track.
        case busy
        /// The lock file cannot be made (the fetch itself will say why, if it fails).
        case unavailable
    }

    private let descriptor: Int32
    private let path: String

    /// The lock for the track whose temporary file is `partPath`.
    static func take(partPath: String) -> Taken {
        let suffix = ".r2up-part"
        let base = partPath.hasSuffix(suffix) ? String(partPath.dropLast(suffix.count)) : partPath
        let path = base + ".r2up-lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .unavailable }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return .busy
        }
        return .held(FetchLock(descriptor: descriptor, path: path))
    }

    /// Unlinked while held: a process that opened it before takes a lock on the old file, then
    /// finds the track in place and leaves it.
    func release() {
        unlink(path)
        close(descriptor)
    }
}
