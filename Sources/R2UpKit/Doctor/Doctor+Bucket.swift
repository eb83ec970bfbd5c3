import Foundation
import R2UpModel
import R2UpStore
import R2UpTransfer

/// The bucket, write and public URL checks, and what a failed S3 call means.
extension Doctor {
    /// ListObjectsV2 with max-keys 1: what object-scoped tokens (R2) may call, unlike HeadBucket.
    func bucketCheck(_ client: S3Client, bucket: String) async -> DoctorCheck {
        do {
            _ = try await client.listObjects(bucket: bucket, maxKeys: 1)
            return .pass(.bucket, "'\(bucket)' exists and the credentials can list it")
        } catch .service(let failure) where failure.code == "AccessDenied" {
            // A token that may write but not list: push works, ls does not. Tell them apart
            // from a missing bucket, which some servers also answer with AccessDenied.
            if case .service(let head)? = await client.headBucketFailure(bucket), head.status == 404 {
                return Self.failure(.bucket, .service(head), bucket: bucket)
            }
            return .warning(
                .bucket, "the credentials may not list '\(bucket)' (AccessDenied)",
                "push works if they may write; ls and sync's checks need List permission")
        } catch {
            return Self.failure(.bucket, error, bucket: bucket)
        }
    }

    /// PUT a small probe object, HEAD it, DELETE it, and HEAD again to see it gone.
    func writeCheck(_ client: S3Client, bucket: String, whileStored: () async -> Void = {}) async -> DoctorCheck {
        let body = Array("a probe object of r2up's doctor check; safe to delete\n".utf8)
        do {
            _ = try await client.putObject(bucket: bucket, key: probeKey, body: .bytes(body), checksum: nil)
        } catch {
            return Self.failure(.write, error, bucket: bucket, action: "write")
        }
        do {
            guard let info = try await client.headObject(bucket: bucket, key: probeKey), info.size == Int64(body.count)
            else {
                _ = try? await client.deleteObject(bucket: bucket, key: probeKey)
                return .fail(
                    .write, "the probe object \(probeKey) was written but cannot be read back whole",
                    "the server does not keep what it accepts; check its storage")
            }
            await whileStored()
            try await client.deleteObject(bucket: bucket, key: probeKey)
        } catch {
            var check = Self.failure(.write, error, bucket: bucket, action: "delete")
            check.detail += " (the probe object \(probeKey) may be left; delete it)"
            return check
        }
        do {
            if try await client.headObject(bucket: bucket, key: probeKey) != nil {
                return .fail(
                    .write, "the probe object \(probeKey) is still there after DELETE",
                    "the credentials may not delete; delete it by hand")
            }
        } catch {
            return Self.failure(.write, error, bucket: bucket, action: "check")
        }
        await removeProbeFolder(client, bucket: bucket)
        return .pass(.write, "wrote, read back and deleted \(probeKey)")
    }

    /// SeaweedFS keeps the emptied `.r2up-doctor/` folder, which `ls` then shows: a DELETE of the
    /// folder's key removes it there (an empty folder only) and is a no-op where keys have no
    /// folders (S3, R2). Tidying only: the probe itself is gone, so a failure changes no verdict.
    private func removeProbeFolder(_ client: S3Client, bucket: String) async {
        guard let slash = probeKey.lastIndex(of: "/") else { return }
        _ = try? await client.deleteObject(bucket: bucket, key: String(probeKey[...slash]))
    }

    /// GETs the probe object, unsigned, through the URL `push` prints for it: what a listener's
    /// browser does. When that does not serve it, says why: the S3 API endpoint as the base
    /// (it needs signed requests), public access not enabled, a base missing the bucket's path
    /// (or holding it where the domain serves the bucket at its root), or a wrong base.
    func publicURLCheck(_ settings: Settings, endpoint: S3Endpoint, bucket: String, engine: TransferEngine) async -> DoctorCheck {
        let base = settings.publicURL?.value
        let url = PublicURL.make(key: probeKey, bucket: bucket, publicBase: base, endpoint: endpoint)
        let status = await fetchStatus(url, engine: engine)
        if status == 200 { return .pass(.publicURL, "fetched the probe through \(url) without credentials") }
        guard let status else {
            return .fail(.publicURL, "\(url) cannot be reached", "check \(OptionName.publicURL.variable) (\(OptionName.publicURL.option)): its host does not answer")
        }
        var trimmed = base ?? ""
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let base, !trimmed.isEmpty else {
            return .fail(
                .publicURL, "no public URL base is set, and the S3 endpoint does not serve \(url) without a signature (HTTP \(status))",
                "enable public access on the bucket (R2: its r2.dev subdomain or a custom domain) and set \(OptionName.publicURL.variable) or \(OptionName.publicURL.option) to it")
        }
        let parsed = URL(string: trimmed)
        let authority = (parsed?.host ?? "") + (parsed?.port.map { ":\($0)" } ?? "")
        let apiHost = authority == endpoint.authority(bucket: nil) || parsed?.host?.hasSuffix(".r2.cloudflarestorage.com") == true
        if (status == 401 || status == 403) && apiHost {
            return .fail(
                .publicURL, "the public URL base \(base) is the S3 API endpoint, which answers HTTP \(status) to an unsigned GET",
                "set \(OptionName.publicURL.variable) to the bucket's public domain (R2: the r2.dev subdomain or a custom domain)")
        }
        if status == 401 || status == 403 {
            return .fail(
                .publicURL, "\(url) answered HTTP \(status): public access is not enabled for the bucket",
                "enable public access (R2: Settings → Public access: the r2.dev subdomain or a custom domain) or allow anonymous reads")
        }
        // A base that lacks the bucket's path, or holds it where the domain serves the bucket itself.
        let withBucket = trimmed + "/" + PublicURL.encode(bucket) + "/" + PublicURL.encode(probeKey)
        if await fetchStatus(withBucket, engine: engine) == 200 {
            return .fail(
                .publicURL, "\(url) answered HTTP \(status), but \(withBucket) serves it: the base lacks the bucket's path",
                "set \(OptionName.publicURL.variable) to \(trimmed)/\(bucket)")
        }
        if trimmed.hasSuffix("/" + bucket) {
            let root = String(trimmed.dropLast(bucket.count + 1))
            if await fetchStatus(root + "/" + PublicURL.encode(probeKey), engine: engine) == 200 {
                return .fail(
                    .publicURL, "\(url) answered HTTP \(status), but \(root) serves the bucket at its root",
                    "set \(OptionName.publicURL.variable) to \(root)")
            }
        }
        return .fail(
            .publicURL, "\(url) answered HTTP \(status): the public URL base \(base) does not serve this bucket",
            "check \(OptionName.publicURL.variable) (\(OptionName.publicURL.option)): the bucket's public domain, with the bucket's path when it serves several")
    }

    /// The status of an unsigned GET, or nil when nothing answered.
    private func fetchStatus(_ url: String, engine: TransferEngine) async -> Int? {
        do {
            return try await engine.perform(HTTPRequest(method: "GET", url: url, sink: .memory(limit: 1 << 20))).status
        } catch {
            return nil
        }
    }

    /// A failed S3 call as a check line: the problem, then what to do.
    static func failure(
        _ kind: DoctorCheck.Kind, _ error: S3ClientError, bucket: String, action: String = "list"
    ) -> DoctorCheck {
        switch error {
        case .service(let failure):
            switch failure.code {
            case "InvalidAccessKeyId":
                return .fail(
                    kind, "the server does not know the access key id (InvalidAccessKeyId)",
                    "check \(OptionName.accessKeyID.variable) or the profile's aws_access_key_id")
            case "SignatureDoesNotMatch":
                return .fail(
                    kind, "the server computed another signature (SignatureDoesNotMatch)",
                    "the secret access key is wrong (check \(OptionName.secretAccessKey.variable) or the profile's aws_secret_access_key), or something between r2up and the server rewrote the request")
            case "NoSuchBucket":
                return .fail(
                    kind, "the bucket '\(bucket)' does not exist (NoSuchBucket)",
                    "check \(OptionName.bucket.option), \(OptionName.bucket.variable) or the profile's bucket, or create it")
            case "AccessDenied":
                return .fail(
                    kind, "the credentials may not \(action) in '\(bucket)' (AccessDenied)",
                    "give the token Object Read & Write on this bucket")
            case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
                return .fail(kind, "the session token is expired or invalid (\(failure.code))", "get new credentials")
            case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException":
                return .fail(kind, "the server rejected the region (\(failure.code))", "check \(OptionName.region.sources)")
            default:
                return .fail(kind, "the server answered \(failure.description)", nil)
            }
        case .transfer(let failure):
            return .fail(kind, "the request failed: \(failure.message)", "check the network and run doctor again")
        case .unexpectedResponse(let text):
            return .fail(kind, "the endpoint does not answer like S3: \(text)", "check the endpoint URL")
        }
    }
}
