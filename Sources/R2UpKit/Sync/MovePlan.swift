import Foundation
package import R2UpModel
import R2UpTransfer

/// Pairs new files with vanished tracks (DESIGN §10): the same device and inode (a rename
/// keeps them, and size and mtime too), else the same size and the same content digest. A
/// file is hashed only when its size is that of a vanished track with a digest, and at most
/// once per digest form. A file that moved and changed matches nothing: it is uploaded.
package enum MovePlan {
    /// - Parameters:
    ///   - uploads: the sync's planned uploads; only new files (no uploaded track at their path) can be moves.
    ///   - vanished: uploaded tracks whose files are gone.
    ///   - digest: the digest of a file in the form of a recorded one (`ContentDigest.of`); nil when it cannot tell.
    /// - Returns: the moves, and the uploads left.
    package static func match(
        _ uploads: [PlannedUpload], vanished: [VanishedTrack], digest: (ScannedFile, String) -> String?
    ) -> (moves: [PlannedMove], uploads: [PlannedUpload]) {
        guard !vanished.isEmpty else { return ([], uploads) }
        struct FileID: Hashable {
            var device: Int64
            var inode: Int64
        }
        var byID: [FileID: Int] = [:]
        var bySize: [Int64: [Int]] = [:]
        for (index, track) in vanished.enumerated() {
            if let device = track.device, let inode = track.inode, inode != 0 { byID[FileID(device: device, inode: inode)] = index }
            if track.digest != nil { bySize[track.size, default: []].append(index) }
        }
        var taken = Set<Int>()
        var moves: [PlannedMove] = []
        var rest: [PlannedUpload] = []
        for upload in uploads {
            let file = upload.file
            guard upload.reason == .new else {
                rest.append(upload)
                continue
            }
            if file.inode != 0, let index = byID[FileID(device: file.device, inode: file.inode)], !taken.contains(index),
                vanished[index].size == file.size, vanished[index].mtimeNs == file.mtimeNs
            {
                taken.insert(index)
                moves.append(PlannedMove(upload: upload, track: vanished[index]))
                continue
            }
            var found: Int?
            var computed: [String: String?] = [:]  // by form: one read of the file per form
            for index in bySize[file.size] ?? [] where !taken.contains(index) {
                guard let recorded = vanished[index].digest else { continue }
                let form = ContentDigest.form(of: recorded)
                let mine = computed[form] ?? digest(file, recorded)
                computed[form] = mine
                if mine == recorded {
                    found = index
                    break
                }
            }
            if let found {
                taken.insert(found)
                moves.append(PlannedMove(upload: upload, track: vanished[found]))
            } else {
                rest.append(upload)
            }
        }
        return (moves, rest)
    }
}
