import Foundation
import Testing
@testable import R2UpKit
import R2UpTestSupport

/// `config init`'s writing: answers to keys, INI text merged in place, the file replaced atomically.
@Suite("Profile writer")
struct ProfileWriterTests {
    static let account = "0123456789abcdef0123456789ABCDEF"

    @Test("an R2 account id becomes its endpoint, and the region auto")
    func accountID() throws {
        let values = try ProfileWriter.values(
            from: ProfileAnswers(
                endpoint: Self.account, accessKeyID: "AKIDEXAMPLE1", secretAccessKey: "s3cr3t", bucket: "music"),
            current: [:])
        #expect(values["endpoint_url"] == "https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com")
        #expect(values["region"] == "auto")
        #expect(values["bucket"] == "music")
        #expect(values["aws_access_key_id"] == "AKIDEXAMPLE1")
        #expect(values["aws_secret_access_key"] == "s3cr3t")
        #expect(values["public_url"] == nil)
    }

    @Test("config init refuses a bucket name S3 refuses, naming the rule")
    func badBucket() {
        #expect(throws: ProfileAnswerError.invalid(setting: "the bucket", reason: "'Bad_Bucket': a bucket name holds only lower-case letters, digits, '.' and '-'")) {
            try ProfileWriter.values(
                from: ProfileAnswers(endpoint: "http://h", accessKeyID: "k", secretAccessKey: "s", bucket: "Bad_Bucket"), current: [:])
        }
    }

    @Test("another endpoint gets us-east-1; its trailing slash is dropped")
    func otherEndpoint() throws {
        let values = try ProfileWriter.values(
            from: ProfileAnswers(endpoint: "http://127.0.0.1:8333/", accessKeyID: "k", secretAccessKey: "s", bucket: "bkt"),
            current: [:])
        #expect(values["endpoint_url"] == "http://127.0.0.1:8333")
        #expect(values["region"] == "us-east-1")
    }

    @Test("blank answers keep the profile's values; a new secret is written; - removes the public URL")
    func keepAndChange() throws {
        let current = [
            "endpoint_url": "http://127.0.0.1:8333", "region": "us-east-1", "bucket": "b",
            "aws_access_key_id": "k", "aws_secret_access_key": "old", "public_url": "https://cdn.example.com",
        ]
        let values = try ProfileWriter.values(
            from: ProfileAnswers(endpoint: "", accessKeyID: " ", secretAccessKey: "new", bucket: nil, publicURL: "-"),
            current: current)
        #expect(values.count == 2)
        #expect(values["aws_secret_access_key"] == "new")
        #expect(values.keys.contains("public_url") && values["public_url"]! == nil)
    }

    @Test("switching to an R2 endpoint switches the region to auto, and drops a stale account id")
    func switchToR2() throws {
        let current = [
            "r2_account_id": "ffffffffffffffffffffffffffffffff", "region": "us-east-1", "bucket": "b",
            "aws_access_key_id": "k", "aws_secret_access_key": "s",
        ]
        let values = try ProfileWriter.values(from: ProfileAnswers(endpoint: Self.account), current: current)
        #expect(values["region"] == "auto")
        #expect(values.keys.contains("r2_account_id") && values["r2_account_id"]! == nil)
    }

    @Test("missing or malformed answers name the setting and never the secret", arguments: [
        (ProfileAnswers(accessKeyID: "k", secretAccessKey: "s", bucket: "bkt"), "the endpoint is required and the profile has none"),
        (ProfileAnswers(endpoint: "http://h", secretAccessKey: "s", bucket: "bkt"), "the access key id is required and the profile has none"),
        (ProfileAnswers(endpoint: "http://h", accessKeyID: "k", bucket: "bkt"), "the secret access key is required and the profile has none"),
        (ProfileAnswers(endpoint: "http://h", accessKeyID: "k", secretAccessKey: "s"), "the bucket is required and the profile has none"),
        (ProfileAnswers(endpoint: "ftp://h", accessKeyID: "k", secretAccessKey: "s", bucket: "bkt"),
         "the endpoint: 'ftp://h' is neither an http(s) URL nor a 32-hex-digit R2 account id"),
        (ProfileAnswers(endpoint: "http://h", accessKeyID: "k", secretAccessKey: "two words", bucket: "bkt"),
         "the secret access key: must not contain spaces or control characters"),
        (ProfileAnswers(endpoint: "http://h", accessKeyID: "k", secretAccessKey: "s", bucket: "bkt", publicURL: "cdn.example.com"),
         "the public URL: 'cdn.example.com': it has no scheme; give it as https://cdn.example.com"),
    ])
    func badAnswers(answers: ProfileAnswers, message: String) {
        #expect(throws: ProfileAnswerError.self) { try ProfileWriter.values(from: answers, current: [:]) }
        do {
            _ = try ProfileWriter.values(from: answers, current: [:])
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("merge edits the profile in place and keeps every other line")
    func mergeInPlace() {
        let text = """
            # my settings
            [default]
            endpoint_url = http://old
            ; a comment in the section
            bucket = keep-me
            Region = us-west-2

            [work]
            bucket = other

            """
        let merged = ProfileWriter.merge(
            profile: "default", values: ["endpoint_url": "http://new", "region": "auto", "public_url": "https://cdn"],
            into: text)
        #expect(merged == """
            # my settings
            [default]
            endpoint_url = http://new
            ; a comment in the section
            bucket = keep-me
            region = auto
            public_url = https://cdn

            [work]
            bucket = other

            """)
    }

    @Test("merge appends a new profile after a blank line; a nil value removes the key")
    func mergeNewAndRemove() {
        let text = "[default]\nbucket = b\npublic_url = https://cdn\n"
        #expect(ProfileWriter.merge(profile: "default", values: ["public_url": String?.none], into: text)
            == "[default]\nbucket = b\n")
        #expect(ProfileWriter.merge(profile: "local", values: ["bucket": "x", "endpoint_url": "http://h"], into: text)
            == "[default]\nbucket = b\npublic_url = https://cdn\n\n[local]\nendpoint_url = http://h\nbucket = x\n")
        #expect(ProfileWriter.merge(profile: "default", values: ["bucket": "b"], into: "") == "[default]\nbucket = b\n")
    }

    @Test("save writes mode 0600 in a 0700 folder, keeps other profiles, and a bad answer writes nothing")
    func saveFile() throws {
        let directory = try TestDirectory()
        let path = directory.path + "/config/r2up/config"
        let answers = ProfileAnswers(
            endpoint: "http://127.0.0.1:8333", accessKeyID: "key-one", secretAccessKey: "secret-one", bucket: "bkt1")
        try ProfileWriter.save(answers, profile: "default", at: path)
        try ProfileWriter.save(
            ProfileAnswers(endpoint: Self.account, accessKeyID: "key-two", secretAccessKey: "secret-two", bucket: "bkt2"),
            profile: "r2", at: path)
        let file = try #require(try INIFile.load(path))
        #expect(file.sections["default"]?["aws_secret_access_key"] == "secret-one")
        #expect(file.sections["r2"]?["region"] == "auto")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat((path as NSString).deletingLastPathComponent, &info) == 0 && info.st_mode & 0o777 == 0o700)

        let before = try String(contentsOfFile: path, encoding: .utf8)
        #expect(throws: ProfileWriteError.answer(.missing("the access key id"))) {
            try ProfileWriter.save(ProfileAnswers(endpoint: "http://h"), profile: "new", at: path)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect(leftovers == ["config"])
    }

    @Test("a damaged config file is reported with exit 3 and left as it is")
    func damagedFile() throws {
        let directory = try TestDirectory()
        let path = directory.path + "/config"
        try "[default\nnot ini at all\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect {
            try ProfileWriter.save(
                ProfileAnswers(endpoint: "http://h", accessKeyID: "k", secretAccessKey: "s", bucket: "bkt"),
                profile: "default", at: path)
        } throws: { error in
            (error as? ProfileWriteError)?.category == .configuration
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "[default\nnot ini at all\n")
    }
}
