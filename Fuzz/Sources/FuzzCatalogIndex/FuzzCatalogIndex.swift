// libFuzzer harness: the catalog's `index.json` (read back as JSON, written again identically)
// and a catalog track made from what the bucket says of an object (user metadata written by
// anyone with write access). Input: the JSON bytes; cut at NUL bytes it is also the key, then
// metadata name/value pairs. Build and run: scripts/fuzz.sh catalog-index.
import FuzzSupport
import Foundation
import R2UpModel
import R2UpStore
@testable import R2UpKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Data(UnsafeBufferPointer(start: $0, count: size)) } ?? Data()
    if let index = try? JSONDecoder().decode(CatalogIndex.self, from: bytes) {
        let written = index.encoded()
        guard let again = try? JSONDecoder().decode(CatalogIndex.self, from: Data(written)) else {
            preconditionFailure("index.json written from a decoded index does not decode")
        }
        precondition(again == index, "index.json does not survive a write and a read")
        precondition(again.encoded() == written, "index.json is not written the same way twice")
    }
    var parts = fields(data, size, count: 1)[...]
    let key = parts.popFirst() ?? ""
    var metadata: [String: String] = [:]
    while let name = parts.popFirst() { metadata[name] = parts.popFirst() ?? "" }
    let details = CatalogObject(etag: "etag", size: Int64(size), contentType: "audio/mp4", lastModified: nil, metadata: metadata)
    let track = CatalogTrack(key: key, url: "https://example.invalid/", details: details)
    for number in [track.year, track.track, track.disc] { if let number { precondition(number > 0) } }
    if let duration = track.duration { precondition(duration.isFinite && duration >= 0, "a duration of \(duration)") }
    let index = CatalogIndex(bucket: "b", prefix: "", tracks: [track])
    guard let read = try? JSONDecoder().decode(CatalogIndex.self, from: Data(index.encoded())) else {
        preconditionFailure("index.json of a track from metadata does not decode")
    }
    precondition(read == index, "a track from metadata does not survive index.json")
    return 0
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzCatalogIndex_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
