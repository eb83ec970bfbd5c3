/// How a key template files what is not a plain track: a compilation's tracks, and the files
/// beside an album's tracks (cover art, a booklet, a cue sheet), which no tag describes.
extension KeyTemplate {
    /// Tags as the template reads them: a compilation's album artist is "Various Artists".
    public static func filing(_ tags: AudioTags?, isCompilation: Bool) -> AudioTags? {
        guard isCompilation, var tags else { return tags }
        tags.albumArtist = AudioTags.variousArtists
        return tags
    }

    /// The directory the keys of a folder's tracks go to: the one most of them share (the first
    /// given on a tie); nil when none has a directory.
    public static func trackDirectory(_ keys: [String]) -> String? {
        let directories = keys.compactMap { key in key.lastIndex(of: "/").map { String(key[..<$0]) } }
        return AlbumGrouping.commonest(directories)
    }

    /// The key of a file that is no track, under a folder whose tracks' keys go to `directory`:
    /// its path below that folder, in that directory. `folder` is relative like `relativePath`
    /// ("" for the folder given itself).
    public static func besideTracks(relativePath: String, folder: String, directory: String) -> String {
        let below = folder.isEmpty ? relativePath : String(relativePath.dropFirst(folder.count + 1))
        return directory + "/" + below
    }
}
