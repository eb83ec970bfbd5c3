/// How a file is cut into parts. R2 wants every part but the last the same size,
/// 5 MiB to 5 GiB, at most 10,000 parts; the plan is fixed when an upload starts.
public struct PartPlan: Sendable, Equatable {
    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumPartSize: Int64 = 5 << 30
    public static let maximumPartCount: Int64 = 10_000

    public let fileSize: Int64
    public let partSize: Int64

    /// Plans a file with the preferred part size, grown in whole MiB when it would need more than 10,000 parts.
    public init(fileSize: Int64, preferredPartSize: Int64) throws(UploadError) {
        guard preferredPartSize >= Self.minimumPartSize, preferredPartSize <= Self.maximumPartSize else {
            throw .invalidPartSize(preferredPartSize)
        }
        var size = preferredPartSize
        if fileSize > size * Self.maximumPartCount {
            let mebibyte: Int64 = 1 << 20
            let needed = (fileSize + Self.maximumPartCount - 1) / Self.maximumPartCount
            size = (needed + mebibyte - 1) / mebibyte * mebibyte
        }
        guard size <= Self.maximumPartSize else { throw .fileTooLarge(fileSize) }
        self.fileSize = fileSize
        partSize = size
    }

    /// A plan with the part size an earlier run fixed (resume must keep it).
    public init(fileSize: Int64, fixedPartSize: Int64) throws(UploadError) {
        guard fixedPartSize >= Self.minimumPartSize, fixedPartSize <= Self.maximumPartSize else {
            throw .invalidPartSize(fixedPartSize)
        }
        guard fileSize <= fixedPartSize * Self.maximumPartCount else { throw .fileTooLarge(fileSize) }
        self.fileSize = fileSize
        partSize = fixedPartSize
    }

    public var partCount: Int { max(1, Int((fileSize + partSize - 1) / partSize)) }

    /// Offset and length of a part, numbered from 1 as S3 does.
    public func range(ofPart number: Int) -> (offset: Int64, length: Int64) {
        let offset = Int64(number - 1) * partSize
        return (offset, min(partSize, fileSize - offset))
    }
}
