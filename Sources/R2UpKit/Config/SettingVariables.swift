/// A setting given to r2up from outside its flags and config files, under the name its giver
/// calls it: the CLI reads these from its environment (`R2UP_BUCKET`), an app from wherever it
/// keeps them. `value` is nil when the variable is not set; a blank value counts as not set.
package struct SettingVariable: Sendable, Equatable {
    /// What the giver calls it; sources and messages show it as it is (`environment R2UP_BUCKET`).
    package var name: String
    package var value: String?

    /// - Parameters:
    ///   - name: what the giver calls the variable.
    ///   - value: its value, or nil when it is not set.
    package init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// The variables `SettingsResolver` consults between the flags and the config files, each list
/// in the order consulted (the first set one wins). Listing every variable, set or not, lets
/// `config show` say which were set but not used, and why.
package struct SettingVariables: Sendable, Equatable {
    package var profile: [SettingVariable] = []
    /// Endpoint URLs.
    package var endpoint: [SettingVariable] = []
    /// A Cloudflare account id, consulted after `endpoint`: its R2 endpoint.
    package var r2Account: [SettingVariable] = []
    package var region: [SettingVariable] = []
    /// The access key id and the secret are used as a pair, the session token with them.
    package var accessKeyID: SettingVariable?
    package var secretAccessKey: SettingVariable?
    package var sessionToken: SettingVariable?
    package var bucket: [SettingVariable] = []
    package var publicURL: [SettingVariable] = []
    package var database: [SettingVariable] = []
    package var caBundle: [SettingVariable] = []

    /// No variables: settings come from the flags, the config files and the defaults.
    package init() {}
}

/// Where r2up's config files are, and its database when nothing names one.
package struct ConfigLocations: Sendable, Equatable {
    /// r2up's own config (`~/.config/r2up/config`).
    package var r2upConfig: String
    /// The AWS CLI's credentials file (`~/.aws/credentials`).
    package var awsCredentials: String
    /// The AWS CLI's config file (`~/.aws/config`).
    package var awsConfig: String
    /// The database when no option or variable names one (`~/.local/share/r2up/r2up.sqlite`).
    package var defaultDatabase: String

    /// The usual places under `homeDirectory`; each other argument, when given and not blank,
    /// moves one (the CLI passes XDG_CONFIG_HOME, XDG_DATA_HOME and the AWS CLI's file variables).
    /// - Parameters:
    ///   - homeDirectory: the user's home folder.
    ///   - configHome: the folder holding `r2up/config` (default `~/.config`).
    ///   - dataHome: the folder holding `r2up/r2up.sqlite` (default `~/.local/share`).
    ///   - awsConfig: the AWS CLI's config file.
    ///   - awsCredentials: the AWS CLI's credentials file.
    package init(
        homeDirectory: String, configHome: String? = nil, dataHome: String? = nil, awsConfig: String? = nil,
        awsCredentials: String? = nil
    ) {
        r2upConfig = (nonEmptySetting(configHome) ?? homeDirectory + "/.config") + "/r2up/config"
        defaultDatabase = (nonEmptySetting(dataHome) ?? homeDirectory + "/.local/share") + "/r2up/r2up.sqlite"
        self.awsConfig = nonEmptySetting(awsConfig) ?? homeDirectory + "/.aws/config"
        self.awsCredentials = nonEmptySetting(awsCredentials) ?? homeDirectory + "/.aws/credentials"
    }
}
