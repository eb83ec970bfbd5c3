import Foundation
package import R2UpModel
import R2UpTransfer

/// What `r2up config init` was told, one answer per question. A nil or blank answer keeps
/// the profile's current value (or, for the optional ones, leaves the setting out).
package struct ProfileAnswers: Sendable, Equatable {
    /// An endpoint URL, or a 32-hex-digit Cloudflare account id.
    package var endpoint: String?
    package var accessKeyID: String?
    package var secretAccessKey: String?
    package var bucket: String?
    /// A public URL base; `-` removes the current one.
    package var publicURL: String?
    package var region: String?

    package init(
        endpoint: String? = nil, accessKeyID: String? = nil, secretAccessKey: String? = nil, bucket: String? = nil,
        publicURL: String? = nil, region: String? = nil
    ) {
        self.endpoint = endpoint
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.bucket = bucket
        self.publicURL = publicURL
        self.region = region
    }
}

/// A problem with an answer to `config init` (exit 2): one line that never holds a secret.
package enum ProfileAnswerError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(String)
    case invalid(setting: String, reason: String)

    package var description: String {
        switch self {
        case .missing(let setting): "\(setting) is required and the profile has none"
        case .invalid(let setting, let reason): "\(setting): \(reason)"
        }
    }
}

/// Writing a profile into r2up's own config file (`$XDG_CONFIG_HOME/r2up/config`), in the
/// form `SettingsResolver` reads: a `[NAME]` section with `endpoint_url`, `region`, `bucket`,
/// `public_url`, `aws_access_key_id` and `aws_secret_access_key`.
///
/// The pieces are separate so each can be tested alone: `values` turns answers into the
/// section's keys, `merge` edits INI text in place (other sections, comments and unknown
/// keys stay as they were), `write` replaces the file atomically with mode 0600.
package enum ProfileWriter {
    /// The keys `config init` owns, in the order a new section lists them.
    package static let keys = [
        "endpoint_url", "region", "bucket", "public_url", "aws_access_key_id", "aws_secret_access_key",
    ]

    /// The section's keys after applying `answers` to `current` (the profile's keys as the
    /// file holds them now). A value of nil in the result means "remove this key".
    package static func values(
        from answers: ProfileAnswers, current: [String: String]
    ) throws(ProfileAnswerError) -> [String: String?] {
        var result: [String: String?] = [:]
        let currentEndpoint = nonBlank(current["endpoint_url"])
            ?? nonBlank(current["r2_account_id"]).map { S3Endpoint.r2URL(account: $0) }

        var endpoint = currentEndpoint
        if let answer = nonBlank(answers.endpoint) {
            endpoint = try endpointURL(answer)
            result["endpoint_url"] = endpoint
            // An account id left in the section would be a second, stale source of the endpoint.
            if current["r2_account_id"] != nil { result["r2_account_id"] = .some(nil) }
        }
        guard let endpoint else { throw .missing("the endpoint") }
        let isR2 = (try? S3Endpoint(url: endpoint))?.isR2 ?? false

        if let key = nonBlank(answers.accessKeyID) {
            try checkToken(key, setting: "the access key id")
            result["aws_access_key_id"] = key
            // A session token belongs to the keys it came with.
            if current["aws_session_token"] != nil { result["aws_session_token"] = .some(nil) }
        } else if nonBlank(current["aws_access_key_id"]) == nil {
            throw .missing("the access key id")
        }
        if let secret = nonBlank(answers.secretAccessKey) {
            try checkToken(secret, setting: "the secret access key")
            result["aws_secret_access_key"] = secret
        } else if nonBlank(current["aws_secret_access_key"]) == nil {
            throw .missing("the secret access key")
        }

        if let bucket = nonBlank(answers.bucket) {
            try checkToken(bucket, setting: "the bucket")
            if let rule = BucketName.problem(bucket) { throw .invalid(setting: "the bucket", reason: "'\(bucket)': \(rule)") }
            result["bucket"] = bucket
        } else if nonBlank(current["bucket"]) == nil {
            throw .missing("the bucket")
        }

        if let answer = nonBlank(answers.publicURL) {
            if answer == "-" {
                if current["public_url"] != nil { result["public_url"] = .some(nil) }
            } else {
                switch PublicBase.validated(answer) {
                case .success(let base): result["public_url"] = base
                case .failure(let problem): throw .invalid(setting: "the public URL", reason: "'\(answer)': \(problem.reason)")
                }
            }
        }

        if let region = nonBlank(answers.region) {
            try checkToken(region, setting: "the region")
            result["region"] = region
        } else if nonBlank(current["region"]) == nil {
            result["region"] = isR2 ? "auto" : "us-east-1"
        } else if nonBlank(answers.endpoint) != nil, isR2 != (nonBlank(current["region"]) == "auto") {
            // A new endpoint of the other kind: R2 signs with region auto, the others never do.
            result["region"] = isR2 ? "auto" : "us-east-1"
        }
        return result
    }

    /// One answer as it is typed, checked alone (`config init` asks again when it is wrong):
    /// nil when it will do. Blank answers are for `values` to judge (keep, or missing).
    package static func problem(with answer: String, for field: PartialKeyPath<ProfileAnswers>) -> ProfileAnswerError? {
        guard let text = nonBlank(answer) else { return nil }
        do throws(ProfileAnswerError) {
            switch field {
            case \ProfileAnswers.endpoint: _ = try endpointURL(text)
            case \ProfileAnswers.accessKeyID: try checkToken(text, setting: "the access key id")
            case \ProfileAnswers.secretAccessKey: try checkToken(text, setting: "the secret access key")
            case \ProfileAnswers.bucket:
                try checkToken(text, setting: "the bucket")
                if let rule = BucketName.problem(text) { throw .invalid(setting: "the bucket", reason: "'\(text)': \(rule)") }
            case \ProfileAnswers.publicURL:
                if text != "-", case .failure(let problem) = PublicBase.validated(text) {
                    throw .invalid(setting: "the public URL", reason: "'\(text)': \(problem.reason)")
                }
            case \ProfileAnswers.region: try checkToken(text, setting: "the region")
            default: break
            }
        } catch {
            return error
        }
        return nil
    }

    /// The endpoint URL an answer stands for: a 32-hex-digit account id becomes the R2 host.
    package static func endpointURL(_ answer: String) throws(ProfileAnswerError) -> String {
        let text = answer.trimmingCharacters(in: .whitespaces)
        if isAccountID(text) { return S3Endpoint.r2URL(account: text.lowercased()) }
        guard let endpoint = try? S3Endpoint(url: text), !text.contains(" ") else {
            throw .invalid(
                setting: "the endpoint",
                reason: "'\(text)' is neither an http(s) URL nor a 32-hex-digit R2 account id")
        }
        _ = endpoint
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// True for a Cloudflare account id: 32 hexadecimal digits.
    package static func isAccountID(_ text: String) -> Bool {
        text.count == 32 && text.allSatisfy(\.isHexDigit)
    }

    /// A value that must be one printable word (keys, bucket, region): no spaces or controls.
    static func checkToken(_ value: String, setting: String) throws(ProfileAnswerError) {
        if value.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            throw .invalid(setting: setting, reason: "must not contain spaces or control characters")
        }
    }

    static func nonBlank(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    // MARK: - INI text

    /// `text` with section `[profile]` changed: each key of `values` set (or, for nil,
    /// removed) where it stands, new keys added at the end of the section, and the section
    /// appended when the file has none. Every other line is kept as it was.
    package static func merge(profile: String, values: [String: String?], into text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let ordered = orderedKeys(values)

        guard let header = lines.firstIndex(where: { sectionName($0) == profile }) else {
            let added = ordered.compactMap { key in values[key]?.map { "\(key) = \($0)" } }
            while lines.last?.trimmingCharacters(in: .whitespaces) == "" && !lines.isEmpty { lines.removeLast() }
            if !lines.isEmpty { lines.append("") }
            lines.append("[\(profile)]")
            lines.append(contentsOf: added)
            return lines.joined(separator: "\n") + "\n"
        }
        var end = lines[(header + 1)...].firstIndex { sectionName($0) != nil } ?? lines.count

        var written: Set<String> = []
        var index = header + 1
        while index < end {
            if let key = settingKey(lines[index]), let value = values[key] {
                if let value, !written.contains(key) {
                    lines[index] = "\(key) = \(value)"
                    written.insert(key)
                    index += 1
                } else {
                    // Removed, or a duplicate of a key already written (the last one would win).
                    lines.remove(at: index)
                    end -= 1
                }
            } else {
                index += 1
            }
        }
        // New keys go after the section's last non-blank line, before the blank lines that
        // separate it from the next section.
        var insertAt = end
        while insertAt > header + 1 && lines[insertAt - 1].trimmingCharacters(in: .whitespaces).isEmpty {
            insertAt -= 1
        }
        let added = ordered.filter { !written.contains($0) }.compactMap { key in values[key]?.map { "\(key) = \($0)" } }
        lines.insert(contentsOf: added, at: insertAt)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The section a line opens (`[name]`), or nil.
    static func sectionName(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("["), trimmed.hasSuffix("]"), trimmed.count > 2 else { return nil }
        return trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
    }

    /// The key a top-level `key = value` line sets (lower-cased, as INIFile reads it), or nil.
    static func settingKey(_ line: String) -> String? {
        guard let first = line.first, first != " ", first != "\t" else { return nil }
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.hasPrefix("#"), !trimmed.hasPrefix(";"), let equals = trimmed.firstIndex(of: "=") else {
            return nil
        }
        return trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
    }

    private static func orderedKeys(_ values: [String: String?]) -> [String] {
        keys.filter { values[$0] != nil } + values.keys.filter { !keys.contains($0) }.sorted()
    }

    // MARK: - The file

    /// The profile's keys in the config file at `path`; empty when the file or section is missing.
    package static func currentValues(profile: String, at path: String) throws(ConfigurationError) -> [String: String] {
        try INIFile.load(path)?.sections[profile] ?? [:]
    }

    /// Writes `answers` into the profile at `path`: reads the file (a damaged one is left
    /// alone and reported), merges, and replaces it atomically with mode 0600.
    package static func save(
        _ answers: ProfileAnswers, profile: String, at path: String
    ) throws(ProfileWriteError) {
        let existing: String
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .cannotWrite(path: path, reason: "the existing file cannot be read")
            }
            existing = String(decoding: data, as: UTF8.self)
        } else {
            existing = ""
        }
        let current: [String: String]
        do {
            current = try INIFile(text: existing, path: path).sections[profile] ?? [:]
        } catch {
            throw .configuration(error)
        }
        let values: [String: String?]
        do { values = try Self.values(from: answers, current: current) } catch { throw .answer(error) }
        try writeAtomically(merge(profile: profile, values: values, into: existing), to: path)
    }

    /// Replaces the file at `path` with `text`: the folder is created with mode 0700 if
    /// missing, the text goes to a temporary file (mode 0600) in the same folder, is
    /// flushed to disk, and is renamed over the old file, so a reader sees the old file
    /// or the new one, never half of one.
    package static func writeAtomically(_ text: String, to path: String) throws(ProfileWriteError) {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .cannotWrite(path: folder, reason: "cannot create the folder (\(error.localizedDescription))")
            }
        }
        let temporary = "\(path).tmp-\(getpid())-\(UUID().uuidString.prefix(8))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        var failure: String?
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count && failure == nil {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno != EINTR { failure = String(cString: strerror(errno)) }
            } else {
                offset += written
            }
        }
        // The umask may have narrowed the mode; it must not have widened it. Make it exact.
        if failure == nil && fchmod(fd, 0o600) != 0 { failure = String(cString: strerror(errno)) }
        if failure == nil && fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        if close(fd) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        if failure == nil && rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw .cannotWrite(path: path, reason: failure)
        }
    }
}

/// Why `config init` wrote nothing.
package enum ProfileWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An answer was missing or invalid (exit 2).
    case answer(ProfileAnswerError)
    /// The existing config file is damaged (exit 3); it was left alone.
    case configuration(ConfigurationError)
    /// The file could not be written (exit 3).
    case cannotWrite(path: String, reason: String)

    package var description: String {
        switch self {
        case .answer(let error): error.description
        case .configuration(let error): "\(error); it was left as it is"
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        }
    }

    /// The category DESIGN §3 gives it.
    package var category: FailureCategory {
        if case .answer = self { return .badInput }
        return .configuration
    }
}
