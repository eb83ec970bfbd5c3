import R2UpModel

extension FileUploader {
    /// Names the server before the first conditional write needs it: a HEAD of `bucket` sent
    /// now, in a task of its own, while the caller opens its store and plans its files. Until a
    /// reply's `Server` header names the server, whether it honours `If-None-Match: *` is not
    /// known: the first single PUTs go out meanwhile with their bodies held (`BodyGate`), which
    /// follow once the reply names a server that honours their condition; other writes wait for
    /// the reply. Then they go as conditional writes where the server honours them, with a HEAD
    /// first where it does not (a held body is then never sent). Sends nothing where the endpoint names the server (R2, S3),
    /// a reply already has, or a request of this run is asking already.
    /// - Returns: whether the request was started.
    @discardableResult
    public func nameServerAhead(bucket: String) -> Bool {
        guard isUnnamed else { return false }
        return profile.nameAhead { [self] in await probe(bucket: bucket) }
    }

    /// Whether neither the endpoint nor a reply has named the server.
    var isUnnamed: Bool {
        profile.value == nil && client.server == nil
            && ServerProfile.identify(endpoint: client.endpoint, serverHeader: nil) == .unknown
    }

    /// The HEAD of the bucket that names the server: any reply names it (a 403 or a 404 as well
    /// as a 200), so only a request that got none is tried again. Its outcome is otherwise not
    /// this request's to report: the writes meet whatever is wrong with the bucket themselves.
    private func probe(bucket: String) async {
        _ = try? await withRetries("HEAD \(bucket)") { () throws(UploadError) -> Bool in
            try await slots.withUnsizedSlot { () throws(UploadError) -> Bool in
                if let failure = await client.headBucketFailure(bucket), !client.hasAnswered { throw .s3(failure) }
                return true
            }
        }
    }
}
