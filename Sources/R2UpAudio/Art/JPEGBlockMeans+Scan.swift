extension JPEGBlockMeans {
    /// At most this many blocks a component (a 64-megapixel picture): larger art is refused.
    static let maximumBlocks = 1 << 20

    /// Decodes one scan's DC coefficients into the planes; returns where the next marker is.
    mutating func scan(_ segment: ArraySlice<UInt8>, bytes: [UInt8], from start: Int) -> Int? {
        let s = Array(segment)
        guard let count = s.first.map(Int.init), (1...components.count).contains(count), s.count >= 1 + count * 2 + 3,
            s[1 + count * 2] == 0, s[2 + count * 2] == 63
        else { return nil }
        var order: [Int] = []
        for i in 0..<count {
            guard let index = components.firstIndex(where: { $0.id == s[1 + i * 2] }) else { return nil }
            components[index].dcTable = Int(s[2 + i * 2] >> 4) & 3
            components[index].acTable = Int(s[2 + i * 2]) & 3
            order.append(index)
        }
        guard allocatePlanes() else { return nil }
        let hMax = components.map(\.h).max() ?? 1, vMax = components.map(\.v).max() ?? 1
        var bits = Bits(bytes: bytes, position: start)
        var predictions = [Int](repeating: 0, count: components.count)
        // The units restarts count: an MCU, or one block in a scan of one component.
        var units: [(component: Int, x: Int, y: Int)] = []
        if order.count == 1, let c = order.first {
            let wide = ((width * components[c].h + hMax - 1) / hMax + 7) / 8
            let high = ((height * components[c].v + vMax - 1) / vMax + 7) / 8
            for y in 0..<high { for x in 0..<wide { units.append((c, x, y)) } }
        }
        let mcusWide = (width + 8 * hMax - 1) / (8 * hMax), mcusHigh = (height + 8 * vMax - 1) / (8 * vMax)
        let total = order.count == 1 ? units.count : mcusWide * mcusHigh
        for unit in 0..<total {
            if restartInterval > 0, unit > 0, unit % restartInterval == 0 {
                bits.restart()
                predictions = predictions.map { _ in 0 }
            }
            if order.count == 1 {
                let (c, x, y) = units[unit]
                guard block(c, x: x, y: y, bits: &bits, prediction: &predictions[c]) else { return nil }
                continue
            }
            let (mx, my) = (unit % mcusWide, unit / mcusWide)
            for c in order {
                for v in 0..<components[c].v {
                    for h in 0..<components[c].h {
                        let (x, y) = (mx * components[c].h + h, my * components[c].v + v)
                        guard block(c, x: x, y: y, bits: &bits, prediction: &predictions[c]) else { return nil }
                    }
                }
            }
        }
        // The next marker that is not a restart (nor stuffing).
        var position = bits.position
        while position + 1 < bytes.count {
            if bytes[position] == 0xFF, bytes[position + 1] != 0, !(0xD0...0xD7).contains(bytes[position + 1]) { return position }
            position += 1
        }
        return bytes.count
    }

    /// One block: its DC difference kept, its AC coefficients read past.
    mutating func block(_ c: Int, x: Int, y: Int, bits: inout Bits, prediction: inout Int) -> Bool {
        guard let dcTable = dc[components[c].dcTable], let acTable = ac[components[c].acTable],
            let size = bits.decode(dcTable), size <= 11
        else { return false }
        prediction += Self.extend(bits.bits(size), size)
        var k = 1
        while k < 64 {
            guard let rs = bits.decode(acTable) else { return false }
            let (run, size) = (rs >> 4, rs & 15)
            if size == 0 {
                if run != 15 { break }
                k += 16
                continue
            }
            k += run
            _ = bits.bits(size)
            k += 1
        }
        let component = components[c]
        if x < component.blocksWide, y < component.blocksHigh {
            components[c].plane[y * component.blocksWide + x] = Int16(clamping: prediction * quant[component.quant])
        }
        return true
    }

    /// A coefficient's bits as a signed value (JPEG's EXTEND).
    static func extend(_ value: Int, _ size: Int) -> Int {
        size == 0 ? 0 : value < 1 << (size - 1) ? value - (1 << size) + 1 : value
    }

    mutating func allocatePlanes() -> Bool {
        let hMax = components.map(\.h).max() ?? 1, vMax = components.map(\.v).max() ?? 1
        let mcusWide = (width + 8 * hMax - 1) / (8 * hMax), mcusHigh = (height + 8 * vMax - 1) / (8 * vMax)
        for i in components.indices where components[i].plane.isEmpty {
            components[i].blocksWide = mcusWide * components[i].h
            components[i].blocksHigh = mcusHigh * components[i].v
            guard components[i].blocksWide * components[i].blocksHigh <= Self.maximumBlocks else { return false }
            components[i].plane = [Int16](repeating: 0, count: components[i].blocksWide * components[i].blocksHigh)
        }
        return true
    }

    /// The block means as RGB pixels, one per 8×8 block of the picture.
    func image() -> RGBImage? {
        guard let first = components.first, !first.plane.isEmpty else { return nil }
        let hMax = components.map(\.h).max() ?? 1, vMax = components.map(\.v).max() ?? 1
        let (w, h) = ((width + 7) / 8, (height + 7) / 8)
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        func sample(_ c: Component, _ x: Int, _ y: Int) -> Double {
            let bx = min(c.blocksWide - 1, x * c.h / hMax), by = min(c.blocksHigh - 1, y * c.v / vMax)
            return Double(c.plane[by * c.blocksWide + bx]) / 8 + 128
        }
        func byte(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
        for y in 0..<h {
            for x in 0..<w {
                let o = (y * w + x) * 3
                let luma = sample(first, x, y)
                if components.count == 3 {
                    let (cb, cr) = (sample(components[1], x, y) - 128, sample(components[2], x, y) - 128)
                    pixels[o] = byte(luma + 1.402 * cr)
                    pixels[o + 1] = byte(luma - 0.344136 * cb - 0.714136 * cr)
                    pixels[o + 2] = byte(luma + 1.772 * cb)
                } else {
                    (pixels[o], pixels[o + 1], pixels[o + 2]) = (byte(luma), byte(luma), byte(luma))
                }
            }
        }
        return RGBImage(width: w, height: h, pixels: pixels)
    }
}
