import CChecksum
import R2UpModel
import CZlib
import Foundation
import SigV4

/// What a pulled file's bytes are checked against before it takes its name (issue 28): the
/// server's word for the object, never the bytes themselves.
package enum ObjectCheck: Sendable, Equatable {
    /// A single-part ETag: the hex MD5 of the object.
    case md5(String)
    /// A multipart ETag ("hex-N"): the MD5 of the parts' MD5s, with the part sizes in order.
    case partMD5s(etag: String, parts: [Int64])
    /// A whole-object checksum the server keeps (`x-amz-checksum-crc32[c]`, no "-N").
    case checksum(PayloadChecksum)
    /// Nothing the server says can check the bytes: only their count is.
    case none(reason: String)

    /// The bytes of `descriptor` (`size` long) as the server described them: nil when they do not
    /// match, else true; a read error counts as a mismatch (the file is then fetched again).
    func matches(descriptor: Int32, size: Int64) -> Bool {
        switch self {
        case .md5(let expected):
            return ObjectDownloader.md5Hex(descriptor: descriptor, length: size) == expected
        case .partMD5s(let etag, let parts):
            guard parts.reduce(0, +) == size else { return false }
            var digests: [UInt8] = []
            var offset: Int64 = 0
            for length in parts {
                var hasher = MD5Hasher()
                guard FileRange.read(descriptor: descriptor, offset: offset, length: length, { hasher.update($0) }) || length == 0
                else { return false }
                digests += hasher.finalize()
                offset += length
            }
            return hexString(Digest.md5(digests)) + "-\(parts.count)" == etag
        case .checksum(let checksum):
            return Self.checksum(checksum.check, descriptor: descriptor, size: size) == checksum
        case .none:
            return true
        }
    }

    private static func checksum(_ check: IntegrityCheck, descriptor: Int32, size: Int64) -> PayloadChecksum? {
        switch check {
        case .md5:
            var hasher = MD5Hasher()
            guard FileRange.read(descriptor: descriptor, offset: 0, length: size, { hasher.update($0) }) || size == 0 else { return nil }
            return .md5(Data(hasher.finalize()).base64EncodedString())
        case .crc32:
            var crc: UInt = 0
            guard FileRange.read(descriptor: descriptor, offset: 0, length: size, { chunk in
                crc = crc32_z(crc, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count)
            }) || size == 0 else { return nil }
            return .crc32(PayloadChecksum.base64(bigEndian: UInt32(truncatingIfNeeded: crc)))
        case .crc32c:
            var crc: UInt32 = 0
            guard FileRange.read(descriptor: descriptor, offset: 0, length: size, { chunk in
                if let base = chunk.baseAddress { crc = r2up_crc32c(crc, base, chunk.count) }
            }) || size == 0 else { return nil }
            return .crc32c(PayloadChecksum.base64(bigEndian: crc))
        }
    }

    /// A multipart ETag's MD5 and part count ("hex-N", N from 1 to 10,000), else nil.
    package static func multipart(_ etag: String) -> (md5: String, count: Int)? {
        let pieces = etag.lowercased().split(separator: "-", omittingEmptySubsequences: false)
        guard pieces.count == 2, let count = Int(pieces[1]), (1...10_000).contains(count),
            FileUploader.isHexMD5(String(pieces[0]))
        else { return nil }
        return (String(pieces[0]), count)
    }

    /// The sizes of `count` parts of `partSize` bytes (the last shorter) covering `size`, or nil
    /// when that many parts of that size cannot cover it.
    static func equalParts(size: Int64, partSize: Int64, count: Int) -> [Int64]? {
        guard partSize > 0, size > 0, (size + partSize - 1) / partSize == Int64(count) else { return nil }
        return (0..<count).map { index in min(partSize, size - Int64(index) * partSize) }
    }
}

/// What HEAD with `partNumber` or `x-amz-checksum-mode` tells.
struct PartOrChecksumInfo: Sendable, Equatable {
    var size: Int64
    /// `x-amz-mp-parts-count`, when the server says.
    var partsCount: Int?
    /// A whole-object checksum, when the server keeps one.
    var checksum: PayloadChecksum?
    var server: String?
    /// Empty when the reply has none.
    var etag: String = ""
}

extension S3Client {
    /// HEAD of one part (`partNumber`: its bytes' length) or, with `checksums`, of the object with
    /// the checksums the server keeps. A server that ignores `partNumber` answers the whole size.
    func headDetails(bucket: String, key: String, partNumber: Int? = nil, checksums: Bool = false) async throws(S3ClientError)
        -> PartOrChecksumInfo
    {
        var call = Call(method: "HEAD", bucket: bucket, key: key)
        if let partNumber { call.query = [("partNumber", String(partNumber))] }
        if checksums { call.headers = [("x-amz-checksum-mode", "ENABLED")] }
        let response = try await send(call)
        guard let length = response.header("content-length").flatMap({ HeaderNumber.parse($0) }) else {
            throw .transfer(TransferError(kind: .connectionReset, message: "the HEAD reply came without Content-Length (cut short?)"))
        }
        var checksum: PayloadChecksum?
        // A composite checksum ("…-N") depends on the part layout: only a whole-object one is used.
        if let value = response.header("x-amz-checksum-crc32c"), !value.contains("-"), value.utf8.count == 8 {
            checksum = .crc32c(value)
        } else if let value = response.header("x-amz-checksum-crc32"), !value.contains("-"), value.utf8.count == 8 {
            checksum = .crc32(value)
        }
        return PartOrChecksumInfo(
            size: length, partsCount: response.header("x-amz-mp-parts-count").flatMap(HeaderNumber.parse).map { Int($0) }, checksum: checksum,
            server: response.header("server"), etag: Self.etag(response))
    }
}

extension ObjectDownloader {
    /// How the bytes of `item` can be checked: its ETag when it is an MD5; a multipart ETag
    /// with the part layout from the store (`partSizeHint`, an upload r2up made) or from the
    /// server (HEAD `partNumber=1`, then each part when they are not of one size); a whole-object
    /// checksum the server keeps; else nothing, and why.
    func check(for item: PullItem, partSizeHint: Int64?) async -> ObjectCheck {
        if let md5 = item.plainMD5 { return .md5(md5) }
        let profile = ServerProfile.identify(endpoint: client.endpoint, serverHeader: nil)
        if let (_, count) = ObjectCheck.multipart(item.etag), profile.multipartETagIsPartMD5s {
            let etag = item.etag.lowercased()
            if count == 1 { return .partMD5s(etag: etag, parts: [item.size]) }
            if let hint = partSizeHint, let parts = ObjectCheck.equalParts(size: item.size, partSize: hint, count: count) {
                return .partMD5s(etag: etag, parts: parts)
            }
            if let parts = await partLayout(item, count: count) { return .partMD5s(etag: etag, parts: parts) }
        }
        if let details = try? await retrying({ () throws(S3ClientError) in
            try await client.headDetails(bucket: bucket, key: item.key, checksums: true)
        }),
            details.size == item.size, let checksum = details.checksum
        {
            return .checksum(checksum)
        }
        if item.etag.isEmpty { return .none(reason: "the server gives no ETag") }
        if ObjectCheck.multipart(item.etag) != nil {
            return .none(
                reason: profile.multipartETagIsPartMD5s
                    ? "the server does not tell the part sizes of multipart ETags" : "\(profile.name)'s multipart ETags are not MD5s")
        }
        return .none(reason: "the server's ETags are not MD5s of the bytes")
    }

    /// The part sizes of a `count`-part object, asked of the server; nil when it does not tell.
    /// Asked up to 3 times: one bad reply (a 403 for `partNumber`, a length cut) must not leave
    /// the bytes checked by size only.
    private func partLayout(_ item: PullItem, count: Int) async -> [Int64]? {
        for _ in 1...3 {
            if let parts = await partLayoutOnce(item, count: count) { return parts }
        }
        return nil
    }

    private func partLayoutOnce(_ item: PullItem, count: Int) async -> [Int64]? {
        guard let first = try? await retrying({ () throws(S3ClientError) in
            try await client.headDetails(bucket: bucket, key: item.key, partNumber: 1)
        }),
            first.partsCount.map({ $0 == count }) ?? true, first.size < item.size
        else { return nil }
        if let parts = ObjectCheck.equalParts(size: item.size, partSize: first.size, count: count) {
            // Parts of one size but the last, as every upload that keeps one part size makes them.
            return parts
        }
        // Parts of different sizes (another tool's upload): a HEAD each, for a bounded count.
        guard count <= 64 else { return nil }
        var parts = [first.size]
        for number in 2...count {
            guard let part = try? await retrying({ () throws(S3ClientError) in
                try await client.headDetails(bucket: bucket, key: item.key, partNumber: number)
            }) else { return nil }
            parts.append(part.size)
        }
        return parts.reduce(0, +) == item.size ? parts : nil
    }
}
