import Foundation
import R2UpAudio

/// An image of an album's art, ready to serve.
public struct AlbumArtImage: Sendable, Equatable {
    /// The image's bytes.
    public var bytes: [UInt8]
    /// `image/png` or `image/jpeg`.
    public var contentType: String
}

extension R2UpSession {
    /// The art of an album whose tracks are these files, as `r2up catalog publish` finds it (a
    /// cover image in their folder, else a picture embedded in one of the first two), shrunk
    /// to a thumbnail of at most `ArtThumbnail.side` pixels when r2up can decode it (a baseline
    /// JPEG), else as found. Only files on this machine are read; nil when there is no art.
    public func albumArt(of paths: [String]) -> AlbumArtImage? {
        let local = paths.filter { access($0, R_OK) == 0 }
        guard !local.isEmpty, let image = AlbumArt.find(tracks: Array(local.prefix(2))), let kind = ArtImage.kind(image) else {
            return nil
        }
        if kind == .jpeg, let png = ArtThumbnail.png(fromJPEG: image) { return AlbumArtImage(bytes: png, contentType: "image/png") }
        return AlbumArtImage(bytes: image, contentType: kind.contentType)
    }
}
