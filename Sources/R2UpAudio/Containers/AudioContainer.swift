import Foundation
import R2UpModel

/// Whether a file's first bytes are those of an audio container TagLib reads. A file named
/// `.m4a` or `.mp3` that is not audio (a download cut short, a renamed archive) is then never
/// handed to TagLib, whose fallback detection scans the whole file for an MPEG frame, and can
/// find one in noise and report a duration the file does not have.
public enum AudioContainer {
    /// How many leading bytes are looked at; an MP3's first frame is looked for in `mpegWindow`.
    public static let headerLength = 12
    public static let mpegWindow = 4_096

    /// The top-level boxes an MP4/QuickTime file may open with: `ftyp` in every file written
    /// since 2001; the rest in older QuickTime-style files, which TagLib still opens by name.
    static let mp4Boxes: Set<String> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid"]

    /// Whether `header` (the file's first bytes) opens an MP4 box, an ID3v2 or APEv2 tag, an MPEG
    /// audio frame, a FLAC, Ogg, RIFF/RF64/BW64 (WAV) or IFF (AIFF) stream. With `findingMPEGFrame`
    /// (an `.mp3`), a frame anywhere in the bytes given counts too: TagLib skips leading padding.
    public static func recognizes(_ header: some Collection<UInt8>, findingMPEGFrame: Bool = false) -> Bool {
        let bytes = Array(header)
        func ascii(_ range: Range<Int>) -> String? {
            guard range.upperBound <= bytes.count else { return nil }
            let slice = bytes[range]
            guard slice.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
            return String(decoding: slice, as: UTF8.self)
        }
        if let box = ascii(4..<8), mp4Boxes.contains(box) { return true }
        switch ascii(0..<4) {
        case "fLaC", "OggS", "RIFF", "RF64", "BW64", "FORM": return true
        default: break
        }
        // ID3v2 (MP3, and FLAC or AIFF files some taggers prefix with one); APEv2 before MP3 frames.
        if ascii(0..<3) == "ID3" || ascii(0..<8) == "APETAGEX" { return true }
        if isMPEGFrameHeader(bytes, at: 0) { return true }
        if findingMPEGFrame {
            for offset in bytes.indices.dropFirst() where bytes[offset] == 0xFF {
                if isMPEGFrameHeader(bytes, at: offset) { return true }
            }
        }
        return false
    }

    /// An MPEG audio frame header at `offset`: eleven set sync bits, a version and a layer that
    /// are not reserved, a bitrate index that is not "bad" and a sample rate that is not reserved.
    static func isMPEGFrameHeader(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + 3 <= bytes.count, bytes[offset] == 0xFF else { return false }
        let second = bytes[offset + 1]
        let third = bytes[offset + 2]
        return second & 0xE0 == 0xE0 && (second >> 3) & 0x3 != 0x1 && (second >> 1) & 0x3 != 0
            && third >> 4 != 0xF && (third >> 2) & 0x3 != 0x3
    }

    /// Reads the first bytes of the file at `path` (an `.mp3`'s first `mpegWindow`) and says whether
    /// they open an audio container; false when it cannot be read.
    public static func recognizes(fileAt path: String) -> Bool {
        // Non-blocking: a FIFO given this name must not hold the reader up.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let isMP3 = FilePath.name(path).lowercased().hasSuffix(".mp3")
        let length = isMP3 ? mpegWindow : headerLength
        var header = [UInt8](repeating: 0, count: length)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, length, 0) }
        guard count > 0 else { return false }
        return recognizes(header.prefix(count), findingMPEGFrame: isMP3)
    }
}
