import Foundation

/// Tags as object metadata (`x-amz-meta-title`, …; DESIGN §12).
///
/// HTTP header values are ASCII: a value with anything else (or one that could be taken for an
/// encoded word) is sent as an RFC 2047 encoded word, `=?UTF-8?B?<base64 of the UTF-8>?=`, the
/// form the AWS SDKs and S3 itself use for non-ASCII metadata. R2 allows 8 KiB of metadata.
public enum TagMetadata {
    /// R2's limit on an object's user metadata: names (with `x-amz-meta-`) and values, in bytes.
    public static let limitBytes = 8_192
    /// The tags as metadata values (not yet encoded), in the order they are kept when space runs
    /// short (title, artist, album, albumartist, track, disc, year, duration, genre,
    /// compilation); absent tags are left out.
    public static func values(_ tags: AudioTags) -> [(name: String, value: String)] {
        var values: [(name: String, value: String)] = []
        if let title = tags.title { values.append(("title", title)) }
        if let artist = tags.artist { values.append(("artist", artist)) }
        if let album = tags.album { values.append(("album", album)) }
        if let albumArtist = tags.albumArtist { values.append(("albumartist", albumArtist)) }
        if let track = tags.track { values.append(("track", String(track))) }
        if let disc = tags.disc { values.append(("disc", String(disc))) }
        if let year = tags.year { values.append(("year", String(year))) }
        if let duration = tags.durationMs { values.append(("duration", seconds(milliseconds: duration))) }
        if let genre = tags.genre { values.append(("genre", genre)) }
        if tags.compilation == true { values.append(("compilation", "1")) }
        return values
    }

    /// Milliseconds as seconds with three decimals: 215342 → "215.342".
    public static func seconds(milliseconds: Int) -> String {
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// A value as it goes on the wire: printable ASCII as it is, anything else as one RFC 2047 word.
    public static func encode(_ value: String) -> String {
        let plain = value.utf8.allSatisfy { (0x20...0x7E).contains($0) } && !value.hasPrefix("=?")
            && value.first != " " && value.last != " "
        if plain { return value }
        return "=?UTF-8?B?" + Data(value.utf8).base64EncodedString() + "?="
    }

    /// A value as read back (HEAD): an RFC 2047 word (B or Q, UTF-8) decoded, anything else as it is.
    public static func decode(_ value: String) -> String {
        let lower = value.lowercased()
        guard lower.hasPrefix("=?utf-8?"), value.hasSuffix("?="), value.count >= 12 else { return value }
        let mode = lower.dropFirst(8).prefix(1)
        let body = String(value.dropFirst(10).dropLast(2))
        if mode == "b", let data = Data(base64Encoded: body), let text = String(data: data, encoding: .utf8) {
            return text
        }
        if mode == "q" {
            var bytes: [UInt8] = []
            var iterator = Array(body.utf8).makeIterator()
            while let byte = iterator.next() {
                if byte == UInt8(ascii: "_") {
                    bytes.append(0x20)
                } else if byte == UInt8(ascii: "="), let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                {
                    bytes.append(value)
                } else {
                    bytes.append(byte)
                }
            }
            if let text = String(validating: bytes, as: UTF8.self) { return text }
        }
        return value
    }

    /// The metadata to send: the tags (encoded) under the user's `--meta`, which wins over a tag
    /// and is never cut. When the whole exceeds `limitBytes`, the longest tag value is cut (at a
    /// character boundary, to half its length) until it fits, and a value cut below 16 bytes is
    /// dropped.
    public static func merged(tags: AudioTags, user: [String: String]) -> [String: String] {
        var raw = values(tags).filter { user[$0.name] == nil }
        func size(_ name: String, _ value: String) -> Int { "x-amz-meta-".utf8.count + name.utf8.count + value.utf8.count }
        let userSize = user.reduce(0) { $0 + size($1.key, $1.value) }
        while userSize + raw.reduce(0, { $0 + size($1.name, encode($1.value)) }) > limitBytes, !raw.isEmpty {
            guard let longest = raw.indices.max(by: { encode(raw[$0].value).utf8.count < encode(raw[$1].value).utf8.count })
            else { break }
            let cut = AudioTags.truncated(raw[longest].value, toBytes: raw[longest].value.utf8.count / 2)
            if cut.utf8.count < 16 { raw.remove(at: longest) } else { raw[longest].value = cut }
        }
        var metadata = user
        for (name, value) in raw { metadata[name] = encode(value) }
        return metadata
    }
}
