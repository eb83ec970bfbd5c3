internal import CAudioTags
import Foundation
import Synchronization
public import R2UpModel

/// Reads tags with TagLib (Debian libtag1-dev) through the CAudioTags shim.
public enum AudioTagReader {
    /// The file types whose tags are read, by lower-cased extension.
    public static let extensions: Set<String> = [
        "m4a", "m4b", "mp4", "mp3", "flac", "ogg", "oga", "opus", "wav", "aif", "aiff", "aifc",
    ]

    /// TagLib 1.13 shares caches (its string lists, the file-type resolvers) without locks:
    /// every call goes through this one lock. It is never taken on the transfer thread.
    static let lock = Mutex(())

    /// Whether r2up reads tags of a file with this name.
    public static func isAudio(_ path: String) -> Bool {
        let name = FilePath.name(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The file's tags and audio properties, or nil when it is not an audio type r2up reads or
    /// its first bytes are no audio container (`AudioContainer`) or TagLib cannot open it (truncated,
    /// corrupt, unreadable): the caller falls back to the path.
    public static func read(path: String) -> AudioTags? {
        guard isAudio(path) else { return nil }
        // TagLib opens by path and would wait forever on a FIFO: regular files only.
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        // Not audio inside (noise, a renamed archive): TagLib's fallback would scan it all.
        guard AudioContainer.recognizes(fileAt: path) else { return nil }
        return lock.withLock { _ -> AudioTags? in
            var raw = r2up_audiotags()
            guard r2up_audiotags_read(path, &raw) == 0 else { return nil }
            defer { r2up_audiotags_free(&raw) }
            func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
                pointer.flatMap { AudioTags.clean(String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self)) }
            }
            func positive(_ value: Int32) -> Int? { value > 0 ? Int(value) : nil }
            return AudioTags(
                title: text(raw.title), artist: text(raw.artist), albumArtist: text(raw.albumartist),
                album: text(raw.album), year: AudioTags.year(fromDate: text(raw.date)),
                track: positive(raw.track), disc: positive(raw.disc), genre: text(raw.genre),
                compilation: raw.compilation != 0 ? true : nil,
                durationMs: raw.has_audio != 0 ? positive(raw.duration_ms) : nil,
                bitrateKbps: positive(raw.bitrate_kbps), sampleRate: positive(raw.sample_rate),
                channels: positive(raw.channels))
        }
    }
}
