// libFuzzer harness: the decoder of the kernel's inotify records (`watch`). Input: the bytes a
// read() of the inotify descriptor returned. Build and run: scripts/fuzz.sh inotify.
import FuzzSupport
@testable import R2UpKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let events = bytes.withUnsafeBytes { InotifyEvent.parse($0) }
    var consumed = 0
    for event in events {
        consumed += InotifyEvent.headerSize
        precondition(consumed <= bytes.count, "an event read past the buffer")
        let length = Int(bytes[consumed - 4]) | Int(bytes[consumed - 3]) << 8 | Int(bytes[consumed - 2]) << 16 | Int(bytes[consumed - 1]) << 24
        consumed += length
        precondition(consumed <= bytes.count, "a name read past the buffer")
        precondition(event.name == nil || event.rawName == nil, "an event with both a name and a raw name")
        if let name = event.name { precondition(!name.isEmpty && !name.utf8.contains(0), "a name with a NUL byte") }
        if let raw = event.rawName { precondition(!raw.isEmpty && !raw.contains(0)) }
    }
    return 0
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzInotify_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
