/// One header line as curl hands it over: a status line or a `name: value` field
/// (name lower-cased, value without surrounding blanks). Blank and malformed lines are nil.
enum HeaderLine: Equatable {
    case status(Int)
    case field(name: String, value: String)

    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var low = 0
        var high = bytes.count
        while low < high, isBlank(bytes[low]) { low += 1 }
        while high > low, isBlank(bytes[high - 1]) { high -= 1 }
        guard low < high else { return nil }
        let line = UnsafeBufferPointer(rebasing: bytes[low..<high])
        if line.count >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // "HTTP/"
            // "HTTP/1.1 200 OK": the digits after the first space.
            guard let space = line.firstIndex(of: 0x20) else {
                self = .status(0)
                return
            }
            var code = 0
            var index = space + 1
            while index < line.count, line[index] == 0x20 { index += 1 }
            while index < line.count, (0x30...0x39).contains(line[index]), code < 1000 {
                code = code * 10 + Int(line[index] - 0x30)
                index += 1
            }
            // A status code is three digits (RFC 9112); more is a malformed line (found by fuzzing).
            self = .status(code > 999 ? 0 : code)
            return
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return nil }
        var nameBytes = Array(line[..<colon])
        for index in nameBytes.indices where (0x41...0x5A).contains(nameBytes[index]) { nameBytes[index] += 0x20 }
        var start = colon + 1
        while start < line.count, isBlank(line[start]) { start += 1 }
        self = .field(
            name: String(decoding: nameBytes, as: UTF8.self),
            value: String(decoding: UnsafeBufferPointer(rebasing: line[start...]), as: UTF8.self))
    }
}
