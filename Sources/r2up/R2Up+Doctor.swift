import ArgumentParser
import Foundation
import R2UpKit

extension R2Up {
    struct Doctor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the configuration, credentials, endpoint, bucket, clock, clipboard and database.",
            discussion: """
                One line per check, in order: config files, credentials (never shown), endpoint \
                reachable, TLS, bucket exists, write and delete of a probe object \
                (.r2up-doctor/probe-UUID, removed again), a fetch of that probe without credentials \
                through the public URL (naming what is wrong when it does not serve: public access not \
                enabled, the S3 API endpoint as the base, the bucket's path missing or given twice, a \
                wrong base), clock skew against the server's Date \
                header (a warning over 5 minutes), clipboard tool (a warning when missing) and \
                database. A check that needs a failed one is skipped. Exit 0 when nothing failed, \
                3 when a configuration, credential, endpoint, bucket or public URL check failed, 5 when the \
                database check failed.
                """)

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let resolver = SettingsResolver()
            let settings: Result<Settings, ConfigurationError>
            do { settings = .success(try resolver.resolve(global.overrides)) } catch { settings = .failure(error) }
            let style = TerminalStyle(environment: environment, isTerminal: Terminal.stdoutIsTerminal)
            let doctor = R2UpKit.Doctor(
                settings: settings, configFiles: resolver.configFiles, ascii: style.ascii,
                clipboardCheck: { Clipboard.doctorCheck(environment: environment) })
            let quiet = global.quiet
            let report = await doctor.run { check in
                if !quiet || check.outcome == .fail { Terminal.output(check.line(style: style)) }
            }
            if !quiet { Terminal.output("doctor: " + report.summary) }
            if report.category != .success { throw CommandFailure(category: report.category) }
        }
    }
}
