// libFuzzer harness: INI profiles (`~/.config/r2up/config`, `~/.aws/credentials`,
// `~/.aws/config`) and the resolution of settings from them. Input, cut at NUL bytes: the three
// files' text, then a profile name (AWS_PROFILE). The files go into a private temporary home.
// Build and run: scripts/fuzz.sh ini.
import FuzzSupport
import Foundation
import R2UpModel
import SigV4
@testable import R2UpKit

let home: String = {
    let path = NSTemporaryDirectory() + "r2up-fuzz-ini-\(getpid())"
    for folder in ["/.config/r2up", "/.aws"] {
        try? FileManager.default.createDirectory(atPath: path + folder, withIntermediateDirectories: true)
    }
    return path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let parts = fields(data, size, count: 4)
    let files = [home + "/.config/r2up/config", home + "/.aws/credentials", home + "/.aws/config"]
    for (path, text) in zip(files, parts) {
        do throws(ConfigurationError) {
            let file = try INIFile(text: text, path: path)
            for (name, values) in file.sections {
                precondition(name == name.trimmingCharacters(in: .whitespaces), "a section name with blanks around it")
                for key in values.keys { precondition(!key.contains("\n"), "a key with a line break") }
            }
        } catch {
            oneLine(error)
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    }
    var variables = SettingVariables()
    if !parts[3].isEmpty { variables.profile = [SettingVariable(name: "AWS_PROFILE", value: parts[3])] }
    do throws(ConfigurationError) {
        let resolver = SettingsResolver(variables: variables, locations: ConfigLocations(homeDirectory: home))
        let settings = try resolver.resolve(SettingOverrides())
        if let credentials = settings.credentials?.value {
            precondition(!credentials.accessKeyID.isEmpty && !credentials.secretAccessKey.isEmpty, "empty credentials resolved")
        }
    } catch {
        oneLine(error)
    }
    return 0
}

/// A configuration error is one line a user reads (exit 2), whatever the file held.
func oneLine(_ error: ConfigurationError) {
    let failure = Failure(error, subject: nil)
    precondition(failure.diagnosis.category == .configuration, "a config file problem not classified as configuration: \(failure.diagnosis.category)")
    precondition(!failure.diagnosis.message.isEmpty)
}

/// SwiftPM links an executable's `main` to `<module>_main`; this one runs libFuzzer's driver.
@_cdecl("FuzzINI_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv, fuzzOne)
}
