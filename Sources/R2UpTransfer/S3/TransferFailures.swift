import Foundation
public import R2UpModel

// How the transfer layer's errors enter the failure taxonomy (R2UpModel's FailureTaxonomy):
// the retry rules' kind and the user's line, decided here where the error types live.

extension S3ClientError: ClassifiedError {
    public var failureKind: FailureKind {
        switch self {
        case .service(let failure):
            // A 3xx or 4xx whose body is no S3 error document (a success body under a damaged
            // status, a page) is as likely one bad reply as the endpoint's answer: tried again first.
            if failure.message.hasPrefix("the reply is not an S3 error document"), failure.status < 500, failure.status != 429 {
                return .malformedReply(failure.description)
            }
            return .httpStatus(failure.status, code: failure.code)
        case .unexpectedResponse(let text): return .malformedReply(text)
        case .transfer(let failure):
            switch failure.kind {
            case .connectionRefused: return .connectionRefused
            case .connectionReset: return .connectionReset
            case .timeout: return .timeout
            case .dnsFailure: return .dnsFailure
            case .tlsFailure: return .tlsFailure
            case .fileReadFailed: return .fileUnreadable
            case .fileShorterThanExpected: return .fileChanged
            // Never retried and no news for the depth: the caller sends the write another way.
            case .cancelled, .bodyWithheld: return .cancelled
            case .responseLongerThanAsked: return .malformedReply(failure.message)
            case .malformedURL, .responseTooLarge, .fileWriteFailed, .other: return .other(failure.message)
            }
        }
    }

    public func diagnosis(subject: String?) -> Diagnosis {
        let (status, message) = explained
        return Diagnosis(category: status, message: message, subject: subject)
    }

    private var explained: (FailureCategory, String) {
        switch self {
        case .service(let failure):
            switch failure.code {
            case "InvalidAccessKeyId":
                return (.configuration, "the access key id is not known to the server (InvalidAccessKeyId); check \(OptionName.accessKeyID.variable) or the profile")
            case "SignatureDoesNotMatch":
                // Two causes look the same from here; a request rewritten on the way (a proxy
                // that normalises paths or re-encodes headers) is the one people miss.
                return (
                    .configuration,
                    "the server computed another signature (SignatureDoesNotMatch): either the secret access key is wrong (check \(OptionName.secretAccessKey.variable) or the profile) or something between r2up and the server rewrote the request (a proxy changing the path or headers)"
                )
            case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
                return (.configuration, "the session token is expired or invalid (\(failure.code)); get new credentials")
            case "AccessDenied" where failure.codeFromStatus:
                // A bodiless 403 (a HEAD's): a wrong secret looks just like a missing permission.
                return (
                    .configuration,
                    "access denied (HTTP 403, no reason given): either the secret access key is wrong (check \(OptionName.secretAccessKey.variable) or the profile) or the credentials may not read this bucket"
                )
            case "AccessDenied":
                return (.configuration, "access denied (AccessDenied); the credentials are not allowed to write to this bucket")
            case "NoSuchBucket":
                return (.configuration, "the bucket does not exist (NoSuchBucket); check \(OptionName.bucket.sources)")
            case "InvalidBucketName":
                return (.configuration, "the server refused the bucket name (InvalidBucketName); check \(OptionName.bucket.sources)")
            case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException":
                return (.configuration, "the server rejected the region (\(failure.code)); check \(OptionName.region.sources)")
            case "RequestTimeTooSkewed":
                return (.configuration, "this machine's clock is too far from the server's (RequestTimeTooSkewed); set the clock right (NTP)")
            default:
                if failure.code.isEmpty && failure.message.hasPrefix("the reply is not an S3") {
                    return (.configuration, "the endpoint does not speak S3: HTTP \(failure.status), \(failure.message)")
                }
                return (.uploadFailed, failure.description)
            }
        case .transfer(let failure):
            switch failure.kind {
            case .dnsFailure:
                return (.configuration, "the endpoint's host cannot be resolved: \(failure.message); check \(OptionName.endpoint.option)")
            case .malformedURL:
                return (.configuration, "the endpoint URL is not valid: \(failure.message)")
            case .tlsFailure:
                return (.configuration, "TLS failed: \(failure.message); for a private CA pass \(OptionName.caBundle.option)")
            case .connectionRefused:
                return (.uploadFailed, "the endpoint refused the connection: \(failure.message)")
            default:
                return (.uploadFailed, failure.message)
            }
        case .unexpectedResponse(let text):
            return (.configuration, "the endpoint does not answer like S3: \(text)")
        }
    }
}

extension UploadError: ClassifiedError {
    /// The failure kind the retry rules look at.
    public var failureKind: FailureKind {
        switch self {
        case .fileNotFound, .fileDeleted: return .fileVanished
        case .notARegularFile, .invalidPartSize, .fileTooLarge, .invalidKey: return .invalidInput
        case .fileUnreadable: return .fileUnreadable
        case .fileChanged: return .fileChanged
        case .verificationFailed(_, let reason): return .other(reason)
        case .unconfirmed: return .unconfirmed
        case .s3(let error): return error.failureKind
        case .store(let error): return error.failureKind
        case .keyConflict: return .keyConflict
        }
    }

    public func diagnosis(subject: String?) -> Diagnosis {
        let prefix = subject.map { "\($0): " } ?? ""
        switch self {
        case .fileNotFound, .notARegularFile, .fileUnreadable, .invalidPartSize, .fileTooLarge:
            return Diagnosis(category: .badInput, message: description)
        case .invalidKey:
            // The reason names no file: in a folder of thousands the line must say which.
            return Diagnosis(category: .badInput, message: prefix + description)
        case .s3(let inner):
            return inner.diagnosis(subject: subject)
        case .store(let inner):
            return inner.diagnosis(subject: subject)
        default:
            // Some descriptions already start with the path; never print it twice.
            let text = description
            return Diagnosis(category: .uploadFailed, message: text.hasPrefix(prefix) ? text : prefix + text)
        }
    }
}
