/// A baseline (sequential, Huffman) JPEG decoded to its 8×8 block means: the picture at 1/8
/// scale. Every check is on untrusted bytes: anything unexpected gives nil, never a trap.
struct JPEGBlockMeans {
    struct Component {
        var id: UInt8
        var h: Int
        var v: Int
        var quant: Int
        var dcTable = 0
        var acTable = 0
        /// Block means, `blocksWide` × `blocksHigh`.
        var plane: [Int16] = []
        var blocksWide = 0
        var blocksHigh = 0
    }

    /// A Huffman table as JPEG's canonical codes: per length, the first code and its first symbol.
    struct Huffman {
        var maxCode = [Int](repeating: -1, count: 17)
        var offset = [Int](repeating: 0, count: 17)
        var symbols: [UInt8] = []

        init?(counts: ArraySlice<UInt8>, symbols: [UInt8]) {
            guard counts.count == 16 else { return nil }
            self.symbols = symbols
            var code = 0, index = 0
            for (i, count) in counts.enumerated() {
                let length = i + 1
                offset[length] = index - code
                code += Int(count)
                index += Int(count)
                maxCode[length] = Int(count) > 0 ? code - 1 : -1
                code <<= 1
            }
            guard index == symbols.count else { return nil }
        }
    }

    /// Reads entropy-coded bits, undoing 0xFF00 stuffing; at a marker it stops (and gives zeros).
    struct Bits {
        let bytes: [UInt8]
        var position: Int
        var buffer = 0
        var count = 0
        var hitMarker = false

        mutating func bit() -> Int {
            if count == 0 {
                var byte = 0
                if !hitMarker, position < bytes.count {
                    byte = Int(bytes[position])
                    if byte == 0xFF {
                        let next = position + 1 < bytes.count ? bytes[position + 1] : 0xD9
                        if next == 0 { position += 2 } else { hitMarker = true; byte = 0 }
                    } else {
                        position += 1
                    }
                } else {
                    hitMarker = true
                }
                buffer = byte
                count = 8
            }
            count -= 1
            return (buffer >> count) & 1
        }

        mutating func bits(_ n: Int) -> Int {
            var value = 0
            for _ in 0..<n { value = value << 1 | bit() }
            return value
        }

        mutating func decode(_ table: Huffman) -> Int? {
            var code = 0
            for length in 1...16 {
                code = code << 1 | bit()
                if code <= table.maxCode[length] {
                    let index = code + table.offset[length]
                    return index >= 0 && index < table.symbols.count ? Int(table.symbols[index]) : nil
                }
            }
            return nil
        }

        /// Skips to the next byte and over an RSTn marker there.
        mutating func restart() {
            count = 0
            hitMarker = false
            if position + 1 < bytes.count, bytes[position] == 0xFF, (0xD0...0xD7).contains(bytes[position + 1]) { position += 2 }
        }
    }

    var width = 0
    var height = 0
    var components: [Component] = []
    var quant = [Int](repeating: 1, count: 4)
    var dc = [Huffman?](repeating: nil, count: 4)
    var ac = [Huffman?](repeating: nil, count: 4)
    var restartInterval = 0

    /// The picture at 1/8 scale, or nil for anything but a baseline JPEG of 1 or 3 components.
    static func decode(_ bytes: [UInt8]) -> RGBImage? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var jpeg = JPEGBlockMeans()
        var position = 2
        var scanned = false
        while position + 4 <= bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            let marker = bytes[position + 1]
            if marker == 0xFF { position += 1; continue }
            if marker == 0xD9 { break }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            let start = position + 4, end = position + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            let segment = bytes[start..<end]
            switch marker {
            case 0xC0, 0xC1: guard jpeg.frame(segment) else { return nil }
            case 0xC2...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF: return nil  // progressive, lossless, arithmetic
            case 0xC4: guard jpeg.huffman(segment) else { return nil }
            case 0xDB: guard jpeg.quantisation(segment) else { return nil }
            case 0xDD: guard segment.count >= 2 else { return nil }; jpeg.restartInterval = Int(segment.first ?? 0) << 8 | Int(segment.last ?? 0)
            case 0xDA:
                guard let next = jpeg.scan(segment, bytes: bytes, from: end) else { return nil }
                scanned = true
                // Past the entropy-coded data: the next marker that is not a restart.
                position = next
                continue
            default: break
            }
            position = end
        }
        return scanned ? jpeg.image() : nil
    }

    mutating func frame(_ segment: ArraySlice<UInt8>) -> Bool {
        let s = Array(segment)
        guard s.count >= 6, s[0] == 8 else { return false }
        height = Int(s[1]) << 8 | Int(s[2])
        width = Int(s[3]) << 8 | Int(s[4])
        let count = Int(s[5])
        guard width > 0, height > 0, width <= 65_535, count == 1 || count == 3, s.count >= 6 + count * 3 else { return false }
        components = (0..<count).map { i in
            let base = 6 + i * 3
            return Component(id: s[base], h: Int(s[base + 1] >> 4), v: Int(s[base + 1] & 15), quant: Int(s[base + 2] & 3))
        }
        return components.allSatisfy { (1...4).contains($0.h) && (1...4).contains($0.v) }
    }

    mutating func huffman(_ segment: ArraySlice<UInt8>) -> Bool {
        var s = segment
        while let info = s.first {
            s = s.dropFirst()
            guard s.count >= 16 else { return false }
            let counts = s.prefix(16)
            let total = counts.reduce(0) { $0 + Int($1) }
            s = s.dropFirst(16)
            guard s.count >= total, let table = Huffman(counts: counts, symbols: Array(s.prefix(total))) else { return false }
            s = s.dropFirst(total)
            let index = Int(info & 3)
            if info >> 4 == 0 { dc[index] = table } else { ac[index] = table }
        }
        return true
    }

    mutating func quantisation(_ segment: ArraySlice<UInt8>) -> Bool {
        var s = segment
        while let info = s.first {
            s = s.dropFirst()
            let wide = info >> 4 != 0
            let size = wide ? 128 : 64
            guard s.count >= size, let first = s.first else { return false }
            quant[Int(info & 3)] = wide ? Int(first) << 8 | Int(s[s.index(after: s.startIndex)]) : Int(first)
            s = s.dropFirst(size)
        }
        return true
    }
}
