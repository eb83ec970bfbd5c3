import Foundation
package import R2UpTransfer

/// The object attributes of a run's files: the same for all (`base`), with each file's tags
/// as metadata once its `TagFeed` has read them. Kept beside the attributes rather than in
/// them, so the transfer layer's `ObjectAttributes` knows nothing of audio tags.
package struct RunAttributes: Sendable, Equatable {
    package var base: ObjectAttributes
    /// The tags of the run's files (under `--meta`), being read (`TagResolver.attributes`).
    package var tagFeed: TagFeed?

    package init(_ base: ObjectAttributes = ObjectAttributes(), tagFeed: TagFeed? = nil) {
        self.base = base
        self.tagFeed = tagFeed
    }

    /// The attributes for one file: its tags replace `base.metadata` when it has some.
    func attributes(for path: String) async -> ObjectAttributes {
        guard let tagFeed else { return base }
        return await tagFeed.attributes(base, for: path)
    }
}
