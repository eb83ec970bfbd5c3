import Foundation
import Testing
@testable import R2UpAudio
import R2UpTestSupport

/// The first bytes that send a file to TagLib, and those that do not (exact headers).
@Suite("Audio container sniffing")
struct AudioContainerTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("the containers TagLib reads are recognised by their first bytes")
    func recognised() {
        // MP4 / M4A: a box size, then its type.
        #expect(AudioContainer.recognizes([0, 0, 0, 0x20] + Self.bytes("ftypM4A ")))
        #expect(AudioContainer.recognizes([0, 0, 0x10, 0] + Self.bytes("moov")))
        #expect(AudioContainer.recognizes([0, 0, 0, 8] + Self.bytes("free")))
        #expect(AudioContainer.recognizes(Self.bytes("ID3") + [4, 0, 0, 0, 0, 0, 0x21]))
        // MPEG-1 Layer III frame sync (FF FB) and MPEG-2.5 (FF E3).
        #expect(AudioContainer.recognizes([0xFF, 0xFB, 0x90, 0x64]))
        #expect(AudioContainer.recognizes([0xFF, 0xE3, 0x18, 0xC4]))
        #expect(AudioContainer.recognizes(Self.bytes("fLaC") + [0, 0, 0, 0x22]))
        #expect(AudioContainer.recognizes(Self.bytes("OggS") + [0, 2, 0, 0]))
        #expect(AudioContainer.recognizes(Self.bytes("RIFF") + [0x24, 0, 0, 0] + Self.bytes("WAVE")))
        #expect(AudioContainer.recognizes(Self.bytes("FORM") + [0, 0, 0, 0x2E] + Self.bytes("AIFF")))
        #expect(AudioContainer.recognizes(Self.bytes("RF64") + [0xFF, 0xFF, 0xFF, 0xFF] + Self.bytes("WAVE")))
        #expect(AudioContainer.recognizes(Self.bytes("APETAGEX") + [0xD0, 0x07, 0, 0]))
        // An MP3 whose first frame follows some padding: found when looked for (an .mp3), not otherwise.
        let padded = [UInt8](repeating: 0, count: 1_000) + [0xFF, 0xFB, 0x90, 0x64]
        #expect(AudioContainer.recognizes(padded, findingMPEGFrame: true))
        #expect(!AudioContainer.recognizes(padded))
    }

    @Test("noise, text, archives, short and empty headers are not")
    func refused() {
        #expect(!AudioContainer.recognizes([UInt8]()))
        #expect(!AudioContainer.recognizes([0xFF]))
        #expect(!AudioContainer.recognizes(Self.bytes("PK") + [3, 4, 20, 0, 0, 0, 8, 0]))  // zip
        #expect(!AudioContainer.recognizes(Self.bytes("hello, world")))
        #expect(!AudioContainer.recognizes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0]))  // gzip
        // A frame sync whose version bits are the reserved 01 is no MPEG frame; nor one whose
        // layer is reserved, whose bitrate index is "bad", or whose sample rate is reserved.
        #expect(!AudioContainer.recognizes([0xFF, 0xEB, 0x90, 0x64]))
        #expect(!AudioContainer.recognizes([0xFF, 0xF9, 0x90, 0x64]))
        #expect(!AudioContainer.recognizes([0xFF, 0xFB, 0xF0, 0x64]))
        #expect(!AudioContainer.recognizes([0xFF, 0xFB, 0x9C, 0x64]))
        #expect(!AudioContainer.recognizes([0xFF, 0xFB], findingMPEGFrame: true))
        // A box type that is no MP4 top-level box.
        #expect(!AudioContainer.recognizes([0, 0, 0, 0x20] + Self.bytes("abcd")))
        // "ftyp" somewhere else than at offset 4.
        #expect(!AudioContainer.recognizes(Self.bytes("ftyp") + [0, 0, 0, 0x20]))
    }

    @Test("a file named .m4a that holds noise is not opened by TagLib: no tags, no made-up duration")
    func noiseFile() throws {
        let folder = try ScratchFolder()
        let noise = folder.path + "/noise.m4a"
        // Seeded noise that starts with no container's bytes but holds MPEG frame syncs further on,
        // which TagLib's fallback detection would have taken for an MP3 stream.
        var generator = SeededBytes(seed: 42)
        var data = [UInt8](repeating: 0, count: 16_384).map { _ in generator.next() }
        data[0] = 0x42
        for offset in stride(from: 1_000, to: 16_000, by: 417) {
            data[offset] = 0xFF
            data[offset + 1] = 0xFB
            data[offset + 2] = 0x90
        }
        try Data(data).write(to: URL(fileURLWithPath: noise))
        #expect(!AudioContainer.recognizes(fileAt: noise))
        #expect(AudioTagReader.read(path: noise) == nil)
        // Named .mp3, the same bytes are handed to TagLib: a frame follows in the first 4 KiB
        // (read without a crash).
        let framed = folder.path + "/framed.mp3"
        try Data(data).write(to: URL(fileURLWithPath: framed))
        #expect(AudioContainer.recognizes(fileAt: framed))
        _ = AudioTagReader.read(path: framed)
        #expect(!AudioContainer.recognizes(fileAt: folder.path + "/missing.m4a"))
    }
}

/// A small deterministic byte source (xorshift), so the noise file is the same on every run.
struct SeededBytes {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    mutating func next() -> UInt8 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}
