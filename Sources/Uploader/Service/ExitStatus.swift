/// DESIGN §3's exit codes, and the one-line explanation of an error that goes with them.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case uploadFailed = 1
    case badInput = 2
    case configuration = 3
    case locked = 4
    case storeFailure = 5
}

/// An error as the user should see it: one line, and the exit code it leads to.
public struct Diagnosis: Sendable, Equatable {
    public var status: ExitStatus
    public var message: String

    public init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }

    /// Explains any error r2up raises; `subject` (a file or key) starts the line when given.
    public init(_ error: any Error, subject: String? = nil) {
        let prefix = subject.map { "\($0): " } ?? ""
        switch error {
        case let error as ConfigurationError:
            self.init(status: .configuration, message: error.description)
        case let error as UploadError:
            switch error {
            case .fileNotFound, .notARegularFile, .fileUnreadable, .invalidKey, .invalidPartSize, .fileTooLarge:
                self.init(status: .badInput, message: error.description)
            case .s3(let inner):
                let diagnosis = Diagnosis(inner, subject: subject)
                self.init(status: diagnosis.status, message: diagnosis.message)
            default:
                // Some descriptions already start with the path; never print it twice.
                let text = error.description
                self.init(status: .uploadFailed, message: text.hasPrefix(prefix) ? text : prefix + text)
            }
        case let error as S3ClientError:
            self.init(Self.explain(error), prefix: prefix)
        case let error as StoreError:
            // The database, not the file being handled: its description names the path.
            self.init(status: .storeFailure, message: error.description)
        default:
            self.init(status: .uploadFailed, message: prefix + String(describing: error))
        }
    }

    private init(_ pair: (ExitStatus, String), prefix: String) {
        self.init(status: pair.0, message: pair.0 == .configuration ? pair.1 : prefix + pair.1)
    }

    private static func explain(_ error: S3ClientError) -> (ExitStatus, String) {
        switch error {
        case .service(let failure):
            switch failure.code {
            case "InvalidAccessKeyId":
                return (.configuration, "the access key id is not known to the server (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID or the profile")
            case "SignatureDoesNotMatch":
                return (
                    .configuration,
                    "the server computed another signature (SignatureDoesNotMatch): either the secret access key is wrong (check AWS_SECRET_ACCESS_KEY or the profile) or something between r2up and the server rewrote the request (a proxy changing the path or headers)"
                )
            case "InvalidBucketName":
                return (.configuration, "the server refused the bucket name (InvalidBucketName); check --bucket or R2UP_BUCKET")
            case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
                return (.configuration, "the session token is expired or invalid (\(failure.code)); get new credentials")
            case "AccessDenied":
                return (.configuration, "access denied (AccessDenied); the credentials are not allowed to write to this bucket")
            case "NoSuchBucket":
                return (.configuration, "the bucket does not exist (NoSuchBucket); check --bucket or R2UP_BUCKET")
            case "AuthorizationHeaderMalformed", "InvalidRegion", "IllegalLocationConstraintException":
                return (.configuration, "the server rejected the region (\(failure.code)); check --region or AWS_REGION")
            default:
                if failure.code.isEmpty && failure.message.hasPrefix("the reply is not an S3") {
                    return (.configuration, "the endpoint does not speak S3: HTTP \(failure.status), \(failure.message)")
                }
                return (.uploadFailed, failure.description)
            }
        case .transfer(let failure):
            switch failure.kind {
            case .dnsFailure:
                return (.configuration, "the endpoint's host cannot be resolved: \(failure.message); check --endpoint")
            case .malformedURL:
                return (.configuration, "the endpoint URL is not valid: \(failure.message)")
            case .tlsFailure:
                return (.configuration, "TLS failed: \(failure.message); for a private CA pass --ca-bundle FILE")
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
