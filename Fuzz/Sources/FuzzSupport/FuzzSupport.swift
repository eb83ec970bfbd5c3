public import CLibFuzzer

/// The callback libFuzzer calls with each input.
public typealias FuzzInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

/// Runs libFuzzer's driver with `argc`/`argv` and `body` (each harness's `<module>_main` calls it:
/// SwiftPM links an executable's `main` to that symbol).
public func runFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ body: FuzzInput
) -> Int32 {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, body)
}

/// The input cut at NUL bytes into UTF-8 fields (invalid bytes repaired), at least `count` of them.
public func fields(_ data: UnsafePointer<UInt8>?, _ size: Int, count: Int) -> [String] {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    var parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    while parts.count < count { parts.append("") }
    return parts
}

/// A file's size and modification time (seconds, nanoseconds); -1s when it has none. Cheap
/// (one `stat`): for asking after each input whether a file changed.
public func fileMark(_ path: String) -> [Int64] {
    var mark: [Int64] = [0, 0, 0]
    mark.withUnsafeMutableBufferPointer { buffer in fuzz_file_mark(path, buffer.baseAddress) }
    return mark
}
