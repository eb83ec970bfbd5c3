import CZlib
import Foundation

/// A small PNG of album art, made without an image library: a baseline JPEG's DC coefficients
/// are each 8×8 block's mean, so decoding only them (the AC ones are read and dropped, no
/// inverse DCT) gives the picture at 1/8 scale, which a box filter brings down to `side`.
/// Progressive or arithmetic-coded JPEGs, CMYK, and PNG input give nil (the catalog then
/// shows the full image).
public enum ArtThumbnail {
    /// The longest side of a thumbnail, in pixels.
    public static let side = 128

    /// The thumbnail of JPEG bytes as PNG bytes; nil when r2up cannot decode them.
    public static func png(fromJPEG bytes: [UInt8], side: Int = ArtThumbnail.side) -> [UInt8]? {
        guard var image = JPEGBlockMeans.decode(bytes) else { return nil }
        image = image.shrunk(toFit: side)
        return image.png()
    }
}

/// An RGB image, 8 bits a channel, rows top to bottom.
struct RGBImage: Equatable {
    var width: Int
    var height: Int
    var pixels: [UInt8]

    /// Box-filtered down so neither side exceeds `side` (never enlarged).
    func shrunk(toFit side: Int) -> RGBImage {
        let scale = max(1, (max(width, height) + side - 1) / side)
        guard scale > 1 else { return self }
        let (w, h) = ((width + scale - 1) / scale, (height + scale - 1) / scale)
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                var sum = (0, 0, 0)
                var count = 0
                for sy in (y * scale)..<min(height, (y + 1) * scale) {
                    for sx in (x * scale)..<min(width, (x + 1) * scale) {
                        let i = (sy * width + sx) * 3
                        sum = (sum.0 + Int(pixels[i]), sum.1 + Int(pixels[i + 1]), sum.2 + Int(pixels[i + 2]))
                        count += 1
                    }
                }
                let o = (y * w + x) * 3
                out[o] = UInt8((sum.0 + count / 2) / count)
                out[o + 1] = UInt8((sum.1 + count / 2) / count)
                out[o + 2] = UInt8((sum.2 + count / 2) / count)
            }
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    /// The image as a PNG (colour type 2, no interlace, filter 0 on each row, zlib-compressed).
    func png() -> [UInt8]? {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * 3 + 1))
        for y in 0..<height {
            raw.append(0)
            raw += pixels[(y * width * 3)..<((y + 1) * width * 3)]
        }
        var length = compressBound(uLong(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(length))
        let status = compressed.withUnsafeMutableBufferPointer { out in
            raw.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong(raw.count), 9) }
        }
        guard status == Z_OK else { return nil }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            png += Self.bigEndian(UInt32(data.count))
            let body = Array(type.utf8) + data
            png += body
            let crc = body.withUnsafeBufferPointer { crc32_z(0, $0.baseAddress, $0.count) }
            png += Self.bigEndian(UInt32(truncatingIfNeeded: crc))
        }
        chunk("IHDR", Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        chunk("IDAT", Array(compressed.prefix(Int(length))))
        chunk("IEND", [])
        return png
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
