import Foundation
public import R2UpModel

/// Where an interrupted multipart upload stood: the upload id, its fixed part size and the parts done.
public struct MultipartCheckpoint: Sendable, Equatable {
    public var uploadID: String
    public var partSize: Int64
    public var parts: [UploadedPart]

    public init(uploadID: String, partSize: Int64, parts: [UploadedPart]) {
        self.uploadID = uploadID
        self.partSize = partSize
        self.parts = parts
    }
}

/// Told about each step of an upload so the job's state machine follows it and a crash can
/// be resumed; the upload queue implements it. `progress` is called on the transfer thread
/// and must not block; the others may wait for the store, never on that thread.
public protocol UploadJournal: Sendable {
    /// CreateMultipartUpload answered.
    func multipartStarted(uploadID: String, partSize: Int64) async throws(JournalError)
    /// A part reached the server.
    func partFinished(_ part: UploadedPart, checksum: PayloadChecksum) async throws(JournalError)
    /// The whole body reached the server (the PUT answered with `etag`, or every part did:
    /// nil); completing and checking the object come next.
    func bodySent(etag: String?) async throws(JournalError)
    func progress(bytesSent: Int64)
    /// Whether an object found at the key with this file's bytes may be taken for an earlier
    /// try's upload whose reply was lost: not when another track's upload is there.
    var mayAdoptObjectAtKey: Bool { get }
    /// A server-side copy went out to a key that was empty (`If-None-Match: *`, or a HEAD found
    /// nothing): what is found there later with the source's size is that copy, its reply lost.
    func copySent()
    /// Whether `copySent()` was told for this job: in this run, or by an earlier one.
    var copyWasSent: Bool { get }
    /// The first copy this job sent was refused: the key held another object before it, so
    /// nothing there is this job's (`copySent()` is forgotten).
    func copyRefused()
    /// A conditional single PUT of `size` bytes went out and no reply came (cut, timed out): the
    /// server may have stored it. `etag` is its body's MD5 in hex when that was hashed. What is
    /// found at the key later with that size (and ETag) is that PUT: a later upload of the
    /// changed file replaces it.
    func putSent(size: Int64, etag: String?)
    /// Whether the object found at a key that had to be empty is this job's own write (a copy or
    /// a single PUT), sent by an earlier try whose reply was lost before the file changed: the
    /// upload replaces it.
    func isOwnEarlierWrite(_ info: ObjectInfo) -> Bool
}

extension UploadJournal {
    /// Adopting is allowed unless the journal says another track's upload is at the key.
    public var mayAdoptObjectAtKey: Bool { true }
    /// A journal that keeps no record of copies: nothing is noted.
    public func copySent() {}
    /// Nothing noted: an object at the key is an earlier copy only by its ETag.
    public var copyWasSent: Bool { false }
    /// Nothing noted, nothing to forget.
    public func copyRefused() {}
    /// A journal that keeps no record of writes: nothing is noted.
    public func putSent(size: Int64, etag: String?) {}
    /// No write noted: nothing at the key is this job's to replace.
    public func isOwnEarlierWrite(_ info: ObjectInfo) -> Bool { false }
}
