import Foundation
import SigV4

/// A track's content digest, recorded at its upload from the checksums the upload already
/// computed (no extra read of the file), so a later sync can tell a moved file by its bytes:
/// "w:" and the whole file's checksum for a single PUT; for a multipart upload "p:", the
/// check, the part size, and the SHA-256 of the parts' checksums in order. Computed again, in the same form,
/// only for a file whose size matches a track whose file vanished.
public enum ContentDigest {
    /// The digest of a single PUT's body.
    static func whole(_ checksum: PayloadChecksum) -> String {
        "w:" + checksum.recorded
    }

    /// The digest of a multipart upload's parts; nil when a part's checksum is not known (a
    /// part resumed from a record without one).
    static func parts(_ parts: [UploadedPart], partSize: Int64) -> String? {
        var recorded: [String] = []
        var check: IntegrityCheck?
        for part in parts.sorted(by: { $0.partNumber < $1.partNumber }) {
            guard let checksum = part.checksum, check == nil || check == checksum.check else { return nil }
            check = checksum.check
            recorded.append(checksum.recorded)
        }
        guard let check else { return nil }
        return "p:\(check.rawValue):\(partSize):" + Digest.sha256Hex(Array(recorded.joined(separator: ",").utf8))
    }

    /// What a digest is computed with (its check, and part size): two digests of one form
    /// come from one read of a file.
    public static func form(of recorded: String) -> String {
        if recorded.hasPrefix("w:"), let check = PayloadChecksum(recorded: String(recorded.dropFirst(2)))?.check {
            return "w:" + check.rawValue
        }
        return String(recorded[..<(recorded.lastIndex(of: ":") ?? recorded.endIndex)])
    }

    /// The digest of `file` in the form of `recorded` (the same check, the same part size);
    /// nil when `recorded` is not a digest r2up writes.
    public static func of(_ file: LocalFile, like recorded: String) throws(UploadError) -> String? {
        guard let colon = recorded.firstIndex(of: ":") else { return nil }
        let form = recorded[..<colon]
        let value = String(recorded[recorded.index(after: colon)...])
        if form == "w" {
            guard let check = PayloadChecksum(recorded: value)?.check else { return nil }
            return whole(try check.checksum(of: file, offset: 0, length: file.size))
        }
        let fields = value.split(separator: ":")
        guard form == "p", fields.count == 3, let check = IntegrityCheck(rawValue: String(fields[0])),
            let partSize = Int64(fields[1]), partSize > 0, let plan = try? PartPlan(fileSize: file.size, fixedPartSize: partSize)
        else { return nil }
        var parts: [UploadedPart] = []
        for number in 1...plan.partCount {
            let range = plan.range(ofPart: number)
            let checksum = try check.checksum(of: file, offset: range.offset, length: range.length)
            parts.append(UploadedPart(partNumber: number, etag: "", size: range.length, checksum: checksum))
        }
        return Self.parts(parts, partSize: partSize)
    }
}
