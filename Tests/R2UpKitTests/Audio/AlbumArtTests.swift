import Foundation
import Testing
@testable import R2UpAudio
@testable import R2UpModel
import R2UpTestSupport

/// Genre, the compilation flag and embedded art in real files (ffmpeg, mutagen), and the
/// thumbnail against ffmpeg's own downscale of the same JPEG.
@Suite("Genre, compilation and album art from real files")
struct AlbumArtTests {
    /// A 320×160 JPEG: red on the left half, blue on the right (ffmpeg, 4:2:0 as covers mostly are).
    static func cover(in folder: String, name: String = "cover.jpg") async throws -> [UInt8] {
        let path = folder + "/" + name
        let made = try await Subprocess.run("/usr/bin/env", [
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
            "color=c=red:s=320x160,drawbox=x=160:y=0:w=160:h=160:color=blue:t=fill", "-frames:v", "1", "-q:v", "3", path,
        ])
        try #require(made.status == 0, "ffmpeg: \(made.stderrText)")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("every format: genre and compilation read as written, the embedded cover byte for byte")
    func tagsAndPictures() async throws {
        let folder = try ScratchFolder()
        let image = try await Self.cover(in: folder.path)
        let names = ["a.mp3", "b.m4a", "c.flac", "d.ogg", "e.opus", "f.wav", "g.aiff"]
        var spec: [[String: Any]] = names.map {
            ["name": $0, "tags": ["title": "T", "album": "Hits", "genre": "Trip-Hop", "compilation": "1"], "picture": folder.path + "/cover.jpg"]
        }
        spec.append(["name": "plain.flac", "tags": ["title": "P", "genre": "Jazz"]])
        try await AudioTagReaderTests.make(spec, in: folder.path)
        for name in names {
            let tags = try #require(AudioTagReader.read(path: folder.path + "/" + name), "\(name)")
            #expect(tags.genre == "Trip-Hop", "\(name)")
            #expect(tags.compilation == true, "\(name)")
            #expect(AlbumArt.embedded(path: folder.path + "/" + name) == image, "\(name)")
        }
        let plain = try #require(AudioTagReader.read(path: folder.path + "/plain.flac"))
        #expect(plain.genre == "Jazz" && plain.compilation == nil)
        #expect(AlbumArt.embedded(path: folder.path + "/plain.flac") == nil)
        // The folder image wins over an embedded one; without it, the first embedded picture.
        #expect(AlbumArt.find(tracks: [folder.path + "/plain.flac"]) == image)
        try FileManager.default.removeItem(atPath: folder.path + "/cover.jpg")
        #expect(AlbumArt.find(tracks: [folder.path + "/plain.flac"]) == nil)
        #expect(AlbumArt.find(tracks: [folder.path + "/plain.flac", folder.path + "/c.flac"]) == image)
    }

    @Test("the thumbnail of a baseline JPEG matches ffmpeg's area downscale of it, pixel by pixel within 8")
    func thumbnail() async throws {
        let folder = try ScratchFolder()
        let image = try await Self.cover(in: folder.path)
        let png = try #require(ArtThumbnail.png(fromJPEG: image, side: 128))
        // 320×160 at 1/8 is 40×20, under 128: kept. PNG decoded by Python's zlib, ffmpeg's scale beside it.
        let pngPath = folder.path + "/thumb.png"
        try Data(png).write(to: URL(fileURLWithPath: pngPath))
        let script = """
            import struct, sys, zlib
            data = open(sys.argv[1], "rb").read()
            assert data[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
            pos, idat, width, height = 8, b"", 0, 0
            while pos < len(data):
                length, kind = struct.unpack(">I4s", data[pos:pos + 8])
                body = data[pos + 8:pos + 8 + length]
                assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
                if kind == b"IHDR": width, height = struct.unpack(">II", body[:8])
                if kind == b"IDAT": idat += body
                pos += 12 + length
            raw = zlib.decompress(idat)
            rows = [raw[y * (width * 3 + 1) + 1:(y + 1) * (width * 3 + 1)] for y in range(height)]
            print(width, height, " ".join(str(b) for row in rows for b in row))
            """
        let decoded = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script, pngPath])
        try #require(decoded.status == 0, "\(decoded.stderrText)")
        let fields = decoded.stdoutText.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(Array(fields.prefix(2)) == [40, 20])
        let ours = Array(fields.dropFirst(2))
        let scaled = try await Subprocess.run("/usr/bin/env", [
            "ffmpeg", "-nostdin", "-loglevel", "error", "-i", folder.path + "/cover.jpg", "-vf", "scale=40:20:flags=area",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ])
        try #require(scaled.status == 0 && scaled.stdout.count == 40 * 20 * 3, "\(scaled.stderrText)")
        #expect(ours.count == 40 * 20 * 3)
        let worst = zip(ours, scaled.stdout).map { abs($0 - Int($1)) }.max() ?? 999
        // Away from the red/blue edge the two agree closely; at it, 4:2:0 chroma blocks differ by more.
        var far = 0
        for y in 0..<20 {
            for x in 0..<40 where abs(x * 8 + 4 - 160) > 24 {
                for c in 0..<3 { far = max(far, abs(ours[(y * 40 + x) * 3 + c] - Int(scaled.stdout[(y * 40 + x) * 3 + c]))) }
            }
        }
        #expect(far <= 8, "worst away from the edge \(far), anywhere \(worst)")
        #expect(Array(ours.prefix(3)).map { $0 > 200 } == [true, false, false])  // red
        #expect(Array(ours.suffix(3)).map { $0 > 200 } == [false, false, true])  // blue
    }

    @Test("not a baseline JPEG, cut short or noise: no thumbnail, no crash")
    func badImages() async throws {
        let folder = try ScratchFolder()
        let image = try await Self.cover(in: folder.path)
        #expect(ArtThumbnail.png(fromJPEG: Array(image.prefix(200))) == nil)
        #expect(ArtThumbnail.png(fromJPEG: [0xFF, 0xD8, 0xFF, 0xD9]) == nil)
        #expect(ArtThumbnail.png(fromJPEG: Array("not a jpeg".utf8)) == nil)
        var noise = image
        for i in stride(from: 700, to: noise.count - 2, by: 37) { noise[i] = UInt8(truncatingIfNeeded: i &* 31) }
        _ = ArtThumbnail.png(fromJPEG: noise)  // any answer but a trap
        // A large picture is brought down to 128 on its longest side.
        let big = folder.path + "/big.jpg"
        let made = try await Subprocess.run("/usr/bin/env", [
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=1600x1200", "-frames:v", "1", big,
        ])
        try #require(made.status == 0)
        let png = try #require(ArtThumbnail.png(fromJPEG: try [UInt8](Data(contentsOf: URL(fileURLWithPath: big)))))
        // IHDR width and height, big-endian at bytes 16..<24: 1600/8 = 200 → 100 wide, 75 high.
        #expect(Array(png[16..<24]) == [0, 0, 0, 100, 0, 0, 0, 75])
    }
}
