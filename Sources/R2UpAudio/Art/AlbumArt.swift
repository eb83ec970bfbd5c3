internal import CAudioTags
import Foundation
import Synchronization
import R2UpModel

/// An album's art from its files: the picture embedded in a track (TagLib), else the folder's
/// `cover.jpg` / `folder.jpg` (and their `.png` twins).
public enum AlbumArt {
    /// Larger art is left out: a cover is rarely over a few MiB, and the catalog holds it whole in memory.
    public static let maximumBytes = 16 << 20
    /// Folder image names, in the order they are preferred (compared without case).
    public static let folderNames = ["cover.jpg", "cover.jpeg", "folder.jpg", "folder.jpeg", "cover.png", "folder.png"]

    /// The picture embedded in the audio file at `path`, if any (front cover first).
    public static func embedded(path: String) -> [UInt8]? {
        guard AudioTagReader.isAudio(path), AudioContainer.recognizes(fileAt: path) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return AudioTagReader.lock.withLock { _ -> [UInt8]? in
            var data: UnsafeMutablePointer<UInt8>?
            var size = 0
            guard r2up_audiotags_picture(path, maximumBytes, &data, &size) == 0, let data else { return nil }
            defer { free(data) }
            let bytes = Array(UnsafeBufferPointer(start: data, count: size))
            return ArtImage.kind(bytes) == nil ? nil : bytes
        }
    }

    /// The folder's cover image file (regular, readable, at most `maximumBytes`), if any.
    public static func folderImage(in folder: String) -> [UInt8]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        let byLower = Dictionary(names.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for wanted in folderNames {
            guard let name = byLower[wanted] else { continue }
            let path = folder + "/" + name
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maximumBytes,
                let data = FileManager.default.contents(atPath: path)
            else { continue }
            let bytes = [UInt8](data)
            if ArtImage.kind(bytes) != nil { return bytes }
        }
        return nil
    }

    /// The art of an album whose local tracks are these files: a folder image beside the first
    /// track that has one, else the first picture embedded in a track.
    public static func find(tracks paths: [String]) -> [UInt8]? {
        var folders: [String] = []
        for path in paths {
            let folder = (path as NSString).deletingLastPathComponent
            if !folders.contains(folder) { folders.append(folder) }
        }
        for folder in folders { if let image = folderImage(in: folder) { return image } }
        for path in paths { if let image = embedded(path: path) { return image } }
        return nil
    }
}

/// What kind of image bytes are.
public enum ArtImage: String, Sendable {
    case jpeg, png

    public static func kind(_ bytes: [UInt8]) -> ArtImage? {
        if bytes.count > 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        if bytes.count > 8, bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        return nil
    }

    public var fileExtension: String { self == .jpeg ? "jpg" : "png" }
    public var contentType: String { self == .jpeg ? "image/jpeg" : "image/png" }
}
