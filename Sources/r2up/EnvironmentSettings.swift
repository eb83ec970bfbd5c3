import Foundation
import R2UpKit

// The environment variables r2up reads for its settings: the one place their names live
// (docs/reference/environment.md). R2UpKit's resolver gets them as `SettingVariables` and
// shows each under the name given here (`environment R2UP_BUCKET`).
extension SettingVariables {
    /// The variables in `environment`, every one r2up reads, set or not, in the order consulted.
    init(environment: [String: String]) {
        func variables(_ names: String...) -> [SettingVariable] {
            names.map { SettingVariable(name: $0, value: environment[$0]) }
        }
        self.init()
        profile = variables("AWS_PROFILE", "R2UP_PROFILE")
        endpoint = variables("R2UP_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
        r2Account = variables("R2_ACCOUNT_ID")
        region = variables("AWS_REGION", "AWS_DEFAULT_REGION")
        accessKeyID = variables("AWS_ACCESS_KEY_ID").first
        secretAccessKey = variables("AWS_SECRET_ACCESS_KEY").first
        sessionToken = variables("AWS_SESSION_TOKEN").first
        bucket = variables("R2UP_BUCKET")
        publicURL = variables("R2UP_PUBLIC_URL")
        database = variables("R2UP_DB")
        caBundle = variables("AWS_CA_BUNDLE")
    }
}

extension ConfigLocations {
    /// The config files and database under `homeDirectory` (default `HOME`), moved by the
    /// XDG base directories and the AWS CLI's file variables when they are set.
    init(environment: [String: String], homeDirectory: String? = nil) {
        self.init(
            homeDirectory: homeDirectory ?? environment["HOME"] ?? NSHomeDirectory(),
            configHome: environment["XDG_CONFIG_HOME"], dataHome: environment["XDG_DATA_HOME"],
            awsConfig: environment["AWS_CONFIG_FILE"], awsCredentials: environment["AWS_SHARED_CREDENTIALS_FILE"])
    }
}

extension SettingsResolver {
    /// A resolver for settings from `environment` (this process's by default) and the config
    /// files under `homeDirectory` (default `HOME`).
    init(environment: [String: String] = ProcessInfo.processInfo.environment, homeDirectory: String? = nil) {
        self.init(
            variables: SettingVariables(environment: environment),
            locations: ConfigLocations(environment: environment, homeDirectory: homeDirectory))
    }
}

extension RunOptions {
    /// The options a transfer command starts from: the defaults, but for test runs only
    /// (scripts/mutate-run.sh) R2UP_TEST_LOW_SPEED_SECONDS (1-30) shortens the 30 s a request
    /// may go without a byte, so replies held past it cost seconds, not half a minute.
    static func forTransfers(environment: [String: String] = ProcessInfo.processInfo.environment) -> RunOptions {
        var options = RunOptions()
        if let text = environment["R2UP_TEST_LOW_SPEED_SECONDS"], let seconds = Int(text),
            (1...options.lowSpeedTimeSeconds).contains(seconds)
        {
            options.lowSpeedTimeSeconds = seconds
        }
        return options
    }
}
