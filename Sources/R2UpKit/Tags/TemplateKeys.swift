import Foundation
import Synchronization
import R2UpAudio
import R2UpModel

/// Keys from `--key-template` for the files of a folder given (push DIR, sync, watch): an audio
/// file by its tags, filed under "Various Artists" in a compilation (`AlbumGrouping`); any other
/// file (cover art, a booklet) beside the tracks of the nearest folder above it that holds some,
/// keeping its path below that folder, or at its own relative path when none does. A folder's
/// tracks are looked at once (its listing and their tags, from the store or TagLib).
final class TemplateKeys: Sendable {
    private struct Folder {
        /// Names of the folder's audio files that are in a compilation.
        var compilations: Set<String>
        /// Where the folder's tracks' keys go; nil when it holds no audio file.
        var directory: String?
    }
    let template: KeyTemplate
    private let tags: TagResolver
    private let folders = Mutex<[String: Folder]>([:])

    init(template: KeyTemplate, tags: TagResolver) {
        self.template = template
        self.tags = tags
    }

    /// The key (before any prefix) of the file at `path` (absolute), `relativePath` below the
    /// folder given; `fileTags` are its tags when the caller has them (else read here).
    func key(path: String, relativePath: String, tags fileTags: AudioTags?? = nil) -> String {
        var folder = Self.parent(path)
        var relativeFolder = Self.parent(relativePath)
        if AudioTagReader.isAudio(path) {
            let isCompilation = facts(folder: folder, relative: relativeFolder).compilations.contains(FilePath.name(path))
            let own = fileTags ?? tags.tags(path: path)
            return template.key(tags: KeyTemplate.filing(own, isCompilation: isCompilation), relativePath: relativePath)
        }
        while true {
            if let directory = facts(folder: folder, relative: relativeFolder).directory {
                return KeyTemplate.besideTracks(relativePath: relativePath, folder: relativeFolder, directory: directory)
            }
            guard !relativeFolder.isEmpty else { return relativePath }
            folder = Self.parent(folder)
            relativeFolder = Self.parent(relativeFolder)
        }
    }

    /// What comes before the last "/" ("" when there is none).
    static func parent(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    private func facts(folder: String, relative: String) -> Folder {
        if let known = folders.withLock({ $0[folder] }) { return known }
        // Regular audio files only, as the scan takes them (hidden names are left out).
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "/" : folder)) ?? [])
            .filter { !$0.hasPrefix(".") && AudioTagReader.isAudio($0) }.sorted()
        let tracks = names.map { AlbumGrouping.Track(folder: folder, name: $0, tags: tags.tags(path: folder + "/" + $0)) }
        let compilation = AlbumGrouping.compilations(tracks)
        let keys = zip(tracks, compilation).map { track, isCompilation in
            template.key(
                tags: KeyTemplate.filing(track.tags, isCompilation: isCompilation),
                relativePath: relative.isEmpty ? track.name : relative + "/" + track.name)
        }
        let found = Folder(
            compilations: Set(zip(names, compilation).filter(\.1).map(\.0)), directory: KeyTemplate.trackDirectory(keys))
        folders.withLock { $0[folder] = found }
        return found
    }
}
