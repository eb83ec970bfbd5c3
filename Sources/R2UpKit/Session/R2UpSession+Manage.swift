public import Foundation
import R2UpStore

extension R2UpSession {
    /// Removes the local copies of tracks whose cloud copy is verified now, as
    /// `r2up offload PATH…` does (a folder: its tracks): each track is checked on disk (its file
    /// is the copy uploaded) and in the bucket (one HEAD, size and ETag as recorded) before its
    /// file goes; a track that fails a check is kept, with its reason in the summary.
    /// - Throws: ``R2UpFailure`` when a path names no uploaded track (nothing is removed), or
    ///   the store fails.
    public func offload(_ paths: [String], options: OffloadOptions = OffloadOptions()) async throws(R2UpFailure) -> OffloadSummary {
        let offloader = Offloader(service: service, store: store)
        let tracks: [StoredTrack]
        do { tracks = try offloader.select(paths) } catch {
            switch error {
            case .store(let failure): throw R2UpFailure(failure)
            case .input(let input):
                let path: String
                switch input {
                case .noSuchPath(let named), .outsideLibrary(let named), .neverUploaded(let named), .notAFileOrFolder(let named):
                    path = named
                }
                throw R2UpFailure(path: path, message: "\(path): r2up has no uploaded track there; nothing removed", category: .badInput)
            }
        }
        return await offloader.run(tracks, options: options)
    }

    /// Drops queued, interrupted or failed uploads by their ids, as `r2up queue cancel ID…`
    /// does; a job another process is uploading is left to it.
    /// - Returns: how many jobs were dropped.
    /// - Throws: ``R2UpFailure`` when an id names no job not completed, or the store fails.
    public func cancelJobs(_ ids: [UUID]) throws(R2UpFailure) -> Int {
        do {
            return try LocalStore(store).cancelJobs(.ids(ids.map(\.uuidString))).cancelled.count
        } catch { throw R2UpFailure(error) }
    }
}
