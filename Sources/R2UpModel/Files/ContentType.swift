/// Content types by file extension: audio first (rclone's fallback table types .m4a as audio/mpeg,
/// which players then mis-handle), then common files. Unknown: application/octet-stream.
public enum ContentType {
    static let byExtension: [String: String] = [
        "m4a": "audio/mp4", "m4b": "audio/mp4", "mp4": "video/mp4", "mp3": "audio/mpeg", "flac": "audio/flac",
        "wav": "audio/wav", "wave": "audio/wav", "aif": "audio/aiff", "aiff": "audio/aiff", "aifc": "audio/aiff",
        "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/opus", "aac": "audio/aac", "weba": "audio/webm",
        "mid": "audio/midi", "midi": "audio/midi", "alac": "audio/mp4", "caf": "audio/x-caf", "wma": "audio/x-ms-wma",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "pdf": "application/pdf", "json": "application/json", "txt": "text/plain; charset=utf-8",
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css", "js": "text/javascript",
        "xml": "application/xml", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "m3u": "audio/x-mpegurl", "m3u8": "application/vnd.apple.mpegurl", "cue": "application/x-cue",
        "lrc": "text/plain; charset=utf-8", "mov": "video/quicktime", "webm": "video/webm",
    ]

    public static let fallback = "application/octet-stream"

    /// The type for a file name, by its last extension, case-insensitively.
    public static func forFile(named name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        let ext = name[name.index(after: dot)...].lowercased()
        return byExtension[ext] ?? fallback
    }
}
