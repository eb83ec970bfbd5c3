import Foundation

/// Whether a file's first bytes are those of an audio container TagLib reads. A file named
/// `.m4a` or `.mp3` that is not audio (a download cut short, a renamed archive) is then never
/// handed to TagLib, whose fallback detection scans the whole file for an MPEG frame, and can
/// find one in noise and report a duration the file does not have.
public enum AudioContainer {
    /// How many leading bytes `recognizes` looks at.
    public static let headerLength = 12

    /// The top-level boxes an MP4/QuickTime file may open with: `ftyp` in every file written
    /// since 2001; the rest in older QuickTime-style files, which TagLib still opens by name.
    static let mp4Boxes: Set<String> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid"]

    /// Whether `header` (the file's first bytes, `headerLength` or fewer) opens an MP4 box,
    /// an ID3v2 tag, an MPEG audio frame, FLAC, Ogg, RIFF (WAV) or IFF (AIFF) stream.
    public static func recognizes(_ header: some Collection<UInt8>) -> Bool {
        let bytes = Array(header.prefix(headerLength))
        func ascii(_ range: Range<Int>) -> String? {
            guard range.upperBound <= bytes.count else { return nil }
            let slice = bytes[range]
            guard slice.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
            return String(decoding: slice, as: UTF8.self)
        }
        if let box = ascii(4..<8), mp4Boxes.contains(box) { return true }
        switch ascii(0..<4) {
        case "fLaC", "OggS", "RIFF", "FORM": return true
        default: break
        }
        // ID3v2 (MP3, and FLAC or AIFF files some taggers prefix with one).
        if ascii(0..<3) == "ID3" { return true }
        // An MPEG audio frame: eleven set sync bits, then a version that is not the reserved 01.
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0, bytes[1] & 0x18 != 0x08 { return true }
        return false
    }

    /// Reads the first bytes of the file at `path` and says whether they open an audio
    /// container; false when it cannot be read.
    public static func recognizes(fileAt path: String) -> Bool {
        // Non-blocking: a FIFO given this name must not hold the reader up.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: headerLength)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, headerLength, 0) }
        guard count > 0 else { return false }
        return recognizes(header.prefix(count))
    }
}
