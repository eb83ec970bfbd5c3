// libFuzzer harness: `--key-template` parsing and the keys made from tag values and file paths.
// Input, cut at NUL bytes: template, relative path, title, artist, album artist, album, year,
// track, disc. Build and run: scripts/fuzz.sh key-template.
import FuzzSupport
import R2UpModel

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let parts = fields(data, size, count: 9)
    let template: KeyTemplate
    do throws(KeyTemplateError) {
        template = try KeyTemplate(parts[0])
    } catch {
        precondition(!error.description.isEmpty && !error.description.contains("\n") || parts[0].contains("\n"), "a template error that is not one line")
        return 0
    }
    let raw = AudioTags(
        title: parts[2], artist: parts[3], albumArtist: parts[4], album: parts[5],
        year: Int(parts[6]), track: Int(parts[7]), disc: Int(parts[8]))
    let cleaned = AudioTags(
        title: AudioTags.clean(parts[2]), artist: AudioTags.clean(parts[3]), albumArtist: AudioTags.clean(parts[4]),
        album: AudioTags.clean(parts[5]), year: Int(parts[6]), track: Int(parts[7]), disc: Int(parts[8]))
    let templateHasControl = parts[0].unicodeScalars.contains(where: isControl)
    for tags in [raw, cleaned, nil] {
        let key = template.key(tags: tags, relativePath: parts[1])
        // "" is the template's documented "no key" answer (push and sync refuse such a file).
        if key.isEmpty { continue }
        precondition(!key.hasPrefix("/"), "a key starting with '/': \(key)")
        for segment in key.split(separator: "/", omittingEmptySubsequences: false) {
            precondition(!segment.isEmpty, "an empty segment in \(key)")
            precondition(segment != "." && segment != "..", "a dot segment in \(key)")
        }
        if !templateHasControl {
            precondition(!key.unicodeScalars.contains(where: isControl), "a control character from a tag or path in \(key.debugDescription)")
        }
        precondition(key == ObjectKey.nfc(key), "a key not in NFC")
    }
    return 0
}

func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzKeyTemplate_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
